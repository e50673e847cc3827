//! Reads of client data, counted where they happen. Every kernel of
//! [`Block`](super::matrix::Block) that reads all of its samples adds them here, on the thread
//! that runs it, and so does a method's raw access to its samples
//! ([`Block::read_dense`](super::matrix::Block::read_dense)). A client computes its reply on one
//! thread, so the network reads this count around the reply: passes over a client's data are
//! counted by the data, not reported by the method (`passes` in trace.csv).

use std::cell::Cell;

thread_local! {
    static SAMPLES: Cell<u64> = const { Cell::new(0) };
}

/// Count one read of `samples` samples on this thread.
pub fn count(samples: usize) {
    SAMPLES.with(|c| c.set(c.get() + samples as u64));
}

/// Samples read on this thread since it started: differences of two calls are what counts.
pub fn samples_read() -> u64 {
    SAMPLES.with(Cell::get)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_per_thread() {
        let before = super::samples_read();
        super::count(7);
        super::count(5);
        assert_eq!(super::samples_read() - before, 12);
        // Another thread's reads are its own.
        let other = std::thread::spawn(|| {
            let b = super::samples_read();
            super::count(3);
            super::samples_read() - b
        })
        .join()
        .unwrap();
        assert_eq!(other, 3);
        assert_eq!(super::samples_read() - before, 12);
    }
}
