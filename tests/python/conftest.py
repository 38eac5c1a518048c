"""Shared pytest settings: hypothesis runs derandomized (the same examples every run, so a failure reproduces) and
prints the failing example and its reproduction blob; set HYPOTHESIS_PROFILE=explore for random, longer runs."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("exactref", deadline=None, derandomize=True, max_examples=100, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, max_examples=2000, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "exactref"))
