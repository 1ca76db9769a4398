//! Running several futures at once inside one task, with their outputs in input order.
//!
//! Devices of a lab are probed, snapshotted and torn down side by side. The futures doing it
//! borrow the lab (`&dyn Lab`), so they are not spawned: they run concurrently inside the
//! calling task, polled together until all are done. [`map_concurrent`] bounds how many are in
//! flight (a lab's devices share the host's CPUs); [`join_all`] runs them all.
//!
//! Each call polls its running futures together, so it is meant for the tens of futures a lab
//! has (devices, pairs of hosts), not for thousands.
//!
//! ```
//! use faultbench_core::concurrent::map_concurrent;
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lengths = map_concurrent(["r1", "pc1", "switch"], 2, |d| async move { d.len() }).await;
//! assert_eq!(lengths, [2, 3, 6]);
//! # });
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Runs every future at once; their outputs, in input order.
pub fn join_all<F: Future>(
    futures: impl IntoIterator<Item = F>,
) -> impl Future<Output = Vec<F::Output>> {
    run(futures.into_iter().map(Box::pin).collect(), usize::MAX)
}

/// Runs `f` on every item, with at most `limit` of the resulting futures in flight (at least
/// one); their outputs, in input order. A new one starts as soon as any running one ends.
///
/// `f` is called for every item right away (a future does nothing until polled); only the
/// futures are kept across awaits, so the result is `Send` whenever they are.
pub fn map_concurrent<T, Fut: Future>(
    items: impl IntoIterator<Item = T>,
    limit: usize,
    f: impl FnMut(T) -> Fut,
) -> impl Future<Output = Vec<Fut::Output>> {
    run(items.into_iter().map(f).map(Box::pin).collect(), limit)
}

async fn run<Fut: Future>(futures: Vec<Pin<Box<Fut>>>, limit: usize) -> Vec<Fut::Output> {
    let limit = limit.max(1);
    let mut outputs: Vec<Option<Fut::Output>> = futures.iter().map(|_| None).collect();
    let mut waiting = futures.into_iter().enumerate();
    let mut running: Vec<(usize, Pin<Box<Fut>>)> = Vec::new();
    std::future::poll_fn(|cx| {
        loop {
            while running.len() < limit {
                match waiting.next() {
                    Some(next) => running.push(next),
                    None => break,
                }
            }
            let before = running.len();
            running.retain_mut(|(i, fut)| match fut.as_mut().poll(cx) {
                Poll::Ready(out) => {
                    outputs[*i] = Some(out);
                    false
                }
                Poll::Pending => true,
            });
            if running.is_empty() && waiting.len() == 0 {
                return Poll::Ready(());
            }
            // Nothing ended: every running future is registered to wake this task.
            if running.len() == before {
                return Poll::Pending;
            }
        }
    })
    .await;
    // Every slot was filled by its own future.
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn outputs_keep_input_order_whatever_ends_first() {
        // The first item takes longest: its output still comes first.
        let out = map_concurrent([30u64, 1, 10, 5], 4, |ms| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ms
        })
        .await;
        assert_eq!(out, [30, 1, 10, 5]);
        assert!(
            join_all(Vec::<std::future::Ready<()>>::new())
                .await
                .is_empty()
        );
    }

    /// Counts itself in `now` while it runs (keeping the highest count in `peak`); returns `v`.
    async fn counted(now: &AtomicUsize, peak: &AtomicUsize, v: usize) -> usize {
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(5)).await;
        now.fetch_sub(1, Ordering::SeqCst);
        v
    }

    #[tokio::test]
    async fn no_more_than_the_limit_run_at_once_and_all_of_them_do() {
        let (now, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = map_concurrent(0..10, 3, |i| counted(&now, &peak, i * 2)).await;
        assert_eq!(out, (0..10).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        // Unbounded: all ten at once.
        peak.store(0, Ordering::SeqCst);
        let all = join_all((0..10).map(|i| counted(&now, &peak, i))).await;
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), 10);
    }

    #[tokio::test]
    async fn a_limit_of_zero_still_runs_one_at_a_time() {
        let out = map_concurrent(["a", "b"], 0, |s| async move { s.to_uppercase() }).await;
        assert_eq!(out, ["A", "B"]);
    }
}
