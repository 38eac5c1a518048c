// examples/demo_workers.h — the two kinds of worker atomic_sum_demo runs on real std::threads.
//
//   atomic_sum()       the honest one: every term goes through std::atomic<float>::fetch_add. The order in which the
//                      adds land depends on the scheduler, so runs differ in their last bits; each one is a sum of
//                      the n terms in some order, rounding after every add, which is exactly what the any-order
//                      standard (Rump, BIT 52 (2012)) covers.
//   lost_update_sum()  the planted bug: read, add, write as three separate steps (a relaxed load, a float add, a
//                      relaxed store), with a widened window between the load and the store. Whenever another
//                      worker stores in that window, its update is overwritten and its terms vanish from the sum.
//
// The racy worker keeps books so that the demo can say exactly which terms a run lost: the shared word holds the
// float's 32 bits and, beside them, the index (+1) of the term whose update wrote it. Each update records which
// update it read from; after the run, following those links back from the final word gives the surviving chain of
// updates, in the order they built the result. Replaying that chain with float additions reproduces the result bit
// for bit (the demo checks it), and every term off the chain was lost. The tag changes nothing about the race: load,
// add and store are still separate, and the float arithmetic is the same as on a bare std::atomic<float>.
#pragma once

#include <atomic>
#include <bit>        // std::bit_cast
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>  // std::runtime_error
#include <string>
#include <thread>
#include <vector>

namespace exactref::demo {

/// Starts `threads` workers that all wait at a start line, releases them together and joins them. A common start
/// makes the workers' adds interleave instead of running one after another while threads are still being created.
template <class Work>
void run_workers(unsigned threads, const Work& work) {
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            ready.fetch_add(1, std::memory_order_acq_rel);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            work(t);
        });
    }
    while (ready.load(std::memory_order_acquire) != threads) std::this_thread::yield();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
}

/// Sums xs with `threads` workers, worker t taking the terms t, t + threads, t + 2·threads, ... (strided), each term
/// added to one shared std::atomic<float> with fetch_add. Returns the final value.
/// `skipped_worker` plants a fault for the demo's own tests: that worker adds nothing (a worker that quits early).
inline float atomic_sum(std::span<const float> xs, unsigned threads, int skipped_worker = -1) {
    std::atomic<float> total{0.0f};
    run_workers(threads, [&](unsigned t) {
        if (static_cast<int>(t) == skipped_worker) return;
        for (std::size_t i = t; i < xs.size(); i += threads) total.fetch_add(xs[i], std::memory_order_relaxed);
    });
    return total.load();
}

/// How the racy worker widens the window between its load and its store, every `every`-th update.
struct race_window {
    enum class kind { none, spin, yield } how = kind::none;
    unsigned every = 1;          // widen every every-th update of each worker (1: every update)
    unsigned spin_steps = 0;     // busy-wait steps for kind::spin

    std::string describe() const {
        switch (how) {
            case kind::none: return "none (bare race)";
            case kind::spin: return "spin " + std::to_string(spin_steps) + " every " + std::to_string(every);
            case kind::yield: return every == 1 ? "yield every update" : "yield every " + std::to_string(every);
        }
        return {};
    }
};

/// What one racy run produced, and the books that explain it.
struct lost_update_run {
    float result = 0;                     // the final value of the shared float
    std::vector<std::size_t> survivors;   // term indices on the surviving chain, in the order they were added
    std::vector<std::size_t> lost;        // term indices whose update was overwritten, ascending
    bool replay_matches = false;          // adding the survivors in chain order, in float, gives `result` exactly
};

/// Sums xs with `threads` racy workers (strided like atomic_sum) that load, add and store separately, widening the
/// window as `window` says. Requires xs.size() < 2^32 (the tag is 32 bits). Throws std::runtime_error when the books
/// do not form a chain (which would mean the bookkeeping itself is broken).
inline lost_update_run lost_update_sum(std::span<const float> xs, unsigned threads, race_window window) {
    if (xs.size() >= (std::size_t{1} << 32) - 1) throw std::runtime_error("lost_update_sum: more than 2^32 - 2 terms");
    // Low 32 bits: the float. High 32 bits: 1 + the index of the term whose update stored this word (0: initial 0.0f).
    std::atomic<std::uint64_t> shared{0};
    std::vector<std::uint32_t> read_from(xs.size(), 0);  // read_from[i]: tag seen by the load of term i's update

    run_workers(threads, [&](unsigned t) {
        unsigned count = 0;
        for (std::size_t i = t; i < xs.size(); i += threads) {
            const std::uint64_t seen = shared.load(std::memory_order_relaxed);                     // read
            read_from[i] = static_cast<std::uint32_t>(seen >> 32);
            const float sum = std::bit_cast<float>(static_cast<std::uint32_t>(seen)) + xs[i];      // add
            if (window.how != race_window::kind::none && ++count % window.every == 0) {
                if (window.how == race_window::kind::yield) {
                    std::this_thread::yield();
                } else {
                    [[maybe_unused]] volatile unsigned sink = 0;  // stores the compiler must keep: a real wait
                    for (unsigned k = 0; k < window.spin_steps; ++k) sink = k;
                }
            }
            const std::uint64_t tag = static_cast<std::uint64_t>(i + 1) << 32;
            shared.store(tag | std::bit_cast<std::uint32_t>(sum), std::memory_order_relaxed);       // write
        }
    });

    lost_update_run run;
    const std::uint64_t last = shared.load();
    run.result = std::bit_cast<float>(static_cast<std::uint32_t>(last));

    // Follow the links back from the final word. Each store happens after the load it depends on, so the links run
    // backwards in the word's modification order and cannot form a cycle; the length guard only makes that explicit.
    std::vector<bool> on_chain(xs.size(), false);
    for (std::uint32_t tag = static_cast<std::uint32_t>(last >> 32); tag != 0; tag = read_from[tag - 1]) {
        if (run.survivors.size() == xs.size() || on_chain[tag - 1]) {
            throw std::runtime_error("lost_update_sum: the update links do not form a chain");
        }
        on_chain[tag - 1] = true;
        run.survivors.push_back(tag - 1);
    }
    std::vector<std::size_t> chain(run.survivors.rbegin(), run.survivors.rend());
    run.survivors = std::move(chain);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        if (!on_chain[i]) run.lost.push_back(i);
    }

    float replay = 0.0f;
    for (std::size_t i : run.survivors) replay = replay + xs[i];
    run.replay_matches = std::bit_cast<std::uint32_t>(replay) == std::bit_cast<std::uint32_t>(run.result);
    return run;
}

}  // namespace exactref::demo
