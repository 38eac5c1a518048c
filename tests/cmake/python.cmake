# pytest over the Python package (tests/python/test_*.py), label "python": scripts/python-test creates or updates the
# project virtual environment .venv, pip-installs exactref when its sources changed, and runs pytest. The first run
# builds the extension (a few minutes on two cores); later runs only re-run pytest.
add_test(NAME python_pytest COMMAND ${PROJECT_SOURCE_DIR}/scripts/python-test
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The longest test of `make test` (from a clean clone: the virtual environment, PyPI's packages, the extension's build
# and pytest's ~80 s): a high COST makes a parallel ctest without cost data (a clean clone) start it first, not last
# behind the other 600 tests.
set_tests_properties(python_pytest PROPERTIES LABELS python TIMEOUT 3000 COST 10000)
# With ccache (CMakeLists.txt), `pip install .` takes the library's objects from this build's, and builds in a folder of
# this build (scripts/python-test: EXACTREF_PIP_BUILD_DIR), so that the launcher stays out of build/python, pip's own.
if(EXACTREF_CCACHE_TEST_ENV)
  set_tests_properties(python_pytest PROPERTIES
                       ENVIRONMENT "${EXACTREF_CCACHE_TEST_ENV};EXACTREF_PIP_BUILD_DIR=${PROJECT_BINARY_DIR}/pip-build")
endif()

# `pip install .` into a new environment with build isolation (nanobind, scikit-build-core from PyPI) and a fresh build
# folder, then the acceptance test: issue 5's "installs on a fresh machine". A full build: label "long" (`make long`).
add_test(NAME python_fresh_install COMMAND ${PROJECT_SOURCE_DIR}/scripts/python-test --fresh-install
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(python_fresh_install PROPERTIES LABELS long TIMEOUT 3000)
