//! The clock of the federated time: CPU seconds of the calling thread. A client computes its
//! reply on one thread (BLAS is single-threaded, clients do not fork), so the thread's CPU time
//! around a reply is that client's compute as if it had a core of its own: it does not grow
//! when other clients share the cores, as wall-clock time does.

/// CPU seconds this thread has run (CLOCK_THREAD_CPUTIME_ID). libc rather than a crate: one
/// call, and libc is already a dependency.
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the clock id is a constant Linux defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::thread_cpu_s;

    #[test]
    fn counts_work_not_sleep() {
        let t0 = thread_cpu_s();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = thread_cpu_s() - t0;
        let t1 = thread_cpu_s();
        let mut x = 0u64;
        while thread_cpu_s() - t1 < 0.05 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        let worked = thread_cpu_s() - t1;
        assert!(slept < 0.01, "sleeping 50 ms used {slept} s of CPU");
        assert!(worked >= 0.05, "spinning used {worked} s of CPU");
    }
}
