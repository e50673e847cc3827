//! Progress bars (indicatif): one for the runs of an experiment, one for the rounds of the
//! current run. Hidden when stderr is not a terminal; log lines still go to stderr.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    multi: MultiProgress,
    tty: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    pub fn new() -> Self {
        let tty = std::io::stderr().is_terminal();
        let target = if tty {
            ProgressDrawTarget::stderr_with_hz(8)
        } else {
            ProgressDrawTarget::hidden()
        };
        Self {
            multi: MultiProgress::with_draw_target(target),
            tty,
        }
    }

    /// A bar over the runs of an experiment (or the experiments of a reproduce).
    pub fn runs(&self, len: u64, what: &str) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>12.bold} [{bar:30.cyan/blue}] {pos}/{len} {msg} (ETA {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar
    }

    /// A bar over the rounds of one run (length = the round cap; finishes early on convergence).
    pub fn rounds(&self, max: u64, what: &str) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(max));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>12} {spinner} round {pos}/{len} {msg} [{elapsed_precise}, ETA {eta}]",
            )
            .expect("valid template"),
        );
        bar.set_prefix(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    /// A spinner for one-off work (generating data, the reference solution).
    pub fn task(&self, what: &str) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A log line that does not tear the bars.
    pub fn log(&self, line: impl AsRef<str>) {
        if self.tty {
            let _ = self.multi.println(line.as_ref());
        } else {
            eprintln!("{}", line.as_ref());
        }
    }
}
