// examples/demo_workers.h — the two kinds of worker atomic_sum_demo runs on real std::threads.
//
//   atomic_sum()       the honest one: every update goes through std::atomic<float>::fetch_add. The order in which
//                      the adds land depends on the scheduler, so runs differ in their last bits. With tile = 1 every
//                      term is one update: a sum of the n terms in some order, rounding after every add, which is
//                      exactly what the any-order standard (Rump, BIT 52 (2012)) covers, and its structure is
//                      levels:any. With tile = K a worker first folds K consecutive terms in a register and sends the
//                      tile's sum as one update, as real kernels do: the structure levels:fold:K,any (standard.h).
//   lost_update_sum()  the planted bug: read, add, write as three separate steps (a relaxed load, a float add, a
//                      relaxed store), with a widened window between the load and the store. Whenever another
//                      worker stores in that window, its update is overwritten and its terms vanish from the sum.
//
// Updates are numbered u = 0, 1, ..., ceil(n / tile) - 1; update u carries the terms [u·tile, (u+1)·tile) and
// worker t sends the updates t, t + threads, t + 2·threads, ... (tile = 1: the terms t, t + threads, ...).
//
// The racy worker keeps books so that the demo can say exactly which terms a run lost: the shared word holds the
// float's 32 bits and, beside them, the index (+1) of the update that wrote it. Each update records which
// update it read from; after the run, following those links back from the final word gives the surviving chain of
// updates, in the order they built the result. Replaying that chain with float additions reproduces the result bit
// for bit (the demo checks it), and every term off the chain was lost. The tag changes nothing about the race: load,
// add and store are still separate, and the float arithmetic is the same as on a bare std::atomic<float>.
#pragma once

#include <algorithm>  // std::min
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

/// The number of updates of a sum of n terms in tiles of `tile` (>= 1).
inline std::size_t update_count(std::size_t n, std::size_t tile) { return (n + tile - 1) / tile; }

/// The value update u sends: its tile's terms folded left to right in float (the term itself for tile = 1).
inline float tile_sum(std::span<const float> xs, std::size_t u, std::size_t tile) {
    const std::size_t begin = u * tile, end = std::min(xs.size(), begin + tile);
    float acc = xs[begin];
    for (std::size_t i = begin + 1; i < end; ++i) acc += xs[i];
    return acc;
}

/// Sums xs with `threads` workers, worker t sending the updates t, t + threads, t + 2·threads, ... (strided), each
/// added to one shared std::atomic<float> with fetch_add: one per term (tile = 1), or one per tile of `tile`
/// consecutive terms folded first. Returns the final value.
/// `skipped_worker` plants a fault for the demo's own tests: that worker adds nothing (a worker that quits early).
inline float atomic_sum(std::span<const float> xs, unsigned threads, int skipped_worker = -1, std::size_t tile = 1) {
    std::atomic<float> total{0.0f};
    const std::size_t updates = update_count(xs.size(), tile);
    run_workers(threads, [&](unsigned t) {
        if (static_cast<int>(t) == skipped_worker) return;
        for (std::size_t u = t; u < updates; u += threads)
            total.fetch_add(tile_sum(xs, u, tile), std::memory_order_relaxed);
    });
    return total.load();
}

/// How the racy worker widens the window between its load and its store, every `every`-th update.
struct race_window {
    // wait: hold the read until another worker's store lands, then write. A worker whose store lands in that window
    // pauses until the held write is done, so each hold overwrites at most one update of each other worker (one,
    // mostly): the finest loss, the same on a busy machine that runs the workers one after another.
    enum class kind { none, spin, yield, wait } how = kind::none;
    unsigned every = 1;          // widen every every-th update of each worker (1: every update)
    unsigned spin_steps = 0;     // busy-wait steps for kind::spin
    unsigned work_steps = 0;     // busy-wait steps before every load, outside the window: the tile's "compute", so
                                 // that workers overlap in time while each window stays short (sparse losses)

    std::string describe() const {
        const std::string work = work_steps == 0 ? "" : "work " + std::to_string(work_steps) + ", ";
        switch (how) {
            case kind::none: return work.empty() ? "none (bare race)" : work + "no window";
            case kind::spin: return work + "spin " + std::to_string(spin_steps) + " every " + std::to_string(every);
            case kind::yield: return work + (every == 1 ? "yield every update" : "yield every " + std::to_string(every));
            case kind::wait: return work + "wait for a store every " + std::to_string(every);
        }
        return {};
    }
};

/// What one racy run produced, and the books that explain it.
struct lost_update_run {
    float result = 0;                     // the final value of the shared float
    std::vector<std::size_t> survivors;   // update indices on the surviving chain, in the order they were added
    std::vector<std::size_t> lost;        // update indices that were overwritten, ascending (tile = 1: terms)
    bool replay_matches = false;          // adding the survivors' values in chain order, in float, gives `result`
};

/// Sums xs with `threads` racy workers (strided like atomic_sum, one update per tile of `tile` terms) that load,
/// add and store separately, widening the window as `window` says. Requires xs.size() < 2^32 (the tag is 32 bits).
/// Throws std::runtime_error when the books do not form a chain (which would mean the bookkeeping itself is broken).
inline lost_update_run lost_update_sum(std::span<const float> xs, unsigned threads, race_window window,
                                       std::size_t tile = 1) {
    if (xs.size() >= (std::size_t{1} << 32) - 1) throw std::runtime_error("lost_update_sum: more than 2^32 - 2 terms");
    const std::size_t updates = update_count(xs.size(), tile);
    // Low 32 bits: the float. High 32 bits: 1 + the index of the update that stored this word (0: initial 0.0f).
    std::atomic<std::uint64_t> shared{0};
    std::vector<std::uint32_t> read_from(updates, 0);  // read_from[u]: tag seen by the load of update u
    std::atomic<unsigned> finished{0};                 // workers done (a holding worker stops waiting for them)
    // kind::wait: 0, or 2^63 + the tag of the word a worker holds; paused: workers waiting for a hold to end.
    std::atomic<std::uint64_t> hold{0};
    std::atomic<unsigned> paused{0};

    run_workers(threads, [&](unsigned t) {
        unsigned count = 0;
        bool holding = false;  // kind::wait: this worker holds a read
        for (std::size_t i = t; i < updates; i += threads) {
            const float value = tile_sum(xs, i, tile);                                             // the register
            if (window.work_steps != 0) {
                [[maybe_unused]] volatile unsigned sink = 0;
                for (unsigned k = 0; k < window.work_steps; ++k) sink = k;
            }
            const std::uint64_t seen = shared.load(std::memory_order_relaxed);                     // read
            read_from[i] = static_cast<std::uint32_t>(seen >> 32);
            const float sum = std::bit_cast<float>(static_cast<std::uint32_t>(seen)) + value;      // add
            if (window.how != race_window::kind::none && ++count % window.every == 0) {
                if (window.how == race_window::kind::yield) {
                    std::this_thread::yield();
                } else if (window.how == race_window::kind::wait) {
                    std::uint64_t none = 0;
                    if (hold.compare_exchange_strong(none, (std::uint64_t{1} << 63) | (seen >> 32))) {
                        // One holder at a time. Wait for a store, unless every other worker is done or paused.
                        while (shared.load() == seen && finished.load() + paused.load() + 1 < threads)
                            std::this_thread::yield();
                        holding = true;
                    }
                } else {
                    [[maybe_unused]] volatile unsigned sink = 0;  // stores the compiler must keep: a real wait
                    for (unsigned k = 0; k < window.spin_steps; ++k) sink = k;
                }
            }
            const std::uint64_t tag = static_cast<std::uint64_t>(i + 1) << 32;
            const std::uint64_t word = tag | std::bit_cast<std::uint32_t>(sum);
            shared.store(word, std::memory_order_relaxed);                                         // write
            if (holding) {
                holding = false;
                hold.store(0);
            } else if (window.how == race_window::kind::wait) {
                // A hold is on and did not read this word: this store landed in its window. Wait until the holder
                // has written over it, so that the hold costs this one update.
                const std::uint64_t h = hold.load();
                if (h != 0 && (h & 0xFFFFFFFFu) != (word >> 32)) {
                    paused.fetch_add(1);
                    while (hold.load() == h) std::this_thread::yield();
                    paused.fetch_sub(1);
                }
            }
        }
        finished.fetch_add(1);
    });

    lost_update_run run;
    const std::uint64_t last = shared.load();
    run.result = std::bit_cast<float>(static_cast<std::uint32_t>(last));

    // Follow the links back from the final word. Each store happens after the load it depends on, so the links run
    // backwards in the word's modification order and cannot form a cycle; the length guard only makes that explicit.
    std::vector<bool> on_chain(updates, false);
    for (std::uint32_t tag = static_cast<std::uint32_t>(last >> 32); tag != 0; tag = read_from[tag - 1]) {
        if (run.survivors.size() == updates || on_chain[tag - 1]) {
            throw std::runtime_error("lost_update_sum: the update links do not form a chain");
        }
        on_chain[tag - 1] = true;
        run.survivors.push_back(tag - 1);
    }
    std::vector<std::size_t> chain(run.survivors.rbegin(), run.survivors.rend());
    run.survivors = std::move(chain);
    for (std::size_t i = 0; i < updates; ++i) {
        if (!on_chain[i]) run.lost.push_back(i);
    }

    float replay = 0.0f;
    for (std::size_t i : run.survivors) replay = replay + tile_sum(xs, i, tile);
    run.replay_matches = std::bit_cast<std::uint32_t>(replay) == std::bit_cast<std::uint32_t>(run.result);
    return run;
}

}  // namespace exactref::demo
