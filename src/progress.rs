//! Progress bars (indicatif): one for the runs of an experiment, one for the rounds of the
//! current run. Off a terminal the bars are hidden and a run prints a progress line every
//! [`LINE_EVERY`] instead (round, metrics, elapsed), so a log file shows a long run moving.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Off a terminal, the interval between a run's progress lines.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    multi: MultiProgress,
    tty: bool,
    /// Print nothing at all (MPI ranks other than 0: rank 0 reports).
    quiet: bool,
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
            quiet: false,
        }
    }

    /// Progress that draws and prints nothing.
    pub fn hidden() -> Self {
        Self {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            tty: false,
            quiet: true,
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

    /// Progress of one run's rounds, its ETA taken from the observed rate toward `target`
    /// (the stop rule's metric value, lower is better when `lower` is true), else the round cap.
    pub fn run(&self, max: u64, what: &str, target: Option<(f64, bool)>) -> RoundProgress {
        RoundProgress {
            bar: self.rounds(max, what),
            tty: self.tty,
            what: what.to_string(),
            max,
            target,
            seen: VecDeque::new(),
            started: Instant::now(),
            last_line: Instant::now(),
            estimating: false,
        }
    }

    /// A counter of the rounds of one run: elapsed time and rounds/s, and a length and ETA only
    /// while the rate toward the stop target gives an estimate ([`RoundProgress::estimate`]).
    fn rounds(&self, max: u64, what: &str) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(max));
        bar.set_style(round_style(false));
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
        if self.quiet {
            return;
        }
        if self.tty {
            let _ = self.multi.println(line.as_ref());
        } else {
            eprintln!("{}", line.as_ref());
        }
    }
}

/// Without an estimate of the rounds, no length and no ETA: the round cap is only a bound, and
/// an ETA from it said 73 s for a run that took 3.
fn round_style(estimate: bool) -> ProgressStyle {
    let template = if estimate {
        "{prefix:>12} {spinner} round {pos}/~{len} {msg} [{elapsed_precise}, {per_sec}, ETA {eta}]"
    } else {
        "{prefix:>12} {spinner} round {pos} {msg} [{elapsed_precise}, {per_sec}]"
    };
    ProgressStyle::with_template(template).expect("valid template")
}

/// One run's progress: a bar on a terminal, a line every [`LINE_EVERY`] elsewhere.
pub struct RoundProgress {
    bar: ProgressBar,
    tty: bool,
    what: String,
    max: u64,
    target: Option<(f64, bool)>,
    /// (round, target metric) of the last rounds, for the rate.
    seen: VecDeque<(u64, f64)>,
    started: Instant,
    last_line: Instant,
    /// Whether the bar shows a length and an ETA now.
    estimating: bool,
}

/// Rounds over which the rate toward the target is measured.
const RATE_WINDOW: usize = 20;

impl RoundProgress {
    /// After `round` rounds: `headline` is the log's metric summary, `value` the target metric.
    pub fn update(&mut self, round: u64, headline: &str, value: Option<f64>) {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            self.seen.push_back((round, v));
            if self.seen.len() > RATE_WINDOW {
                self.seen.pop_front();
            }
        }
        if self.tty {
            let estimate = self.estimate(round);
            if estimate.is_some() != self.estimating {
                self.estimating = estimate.is_some();
                self.bar.set_style(round_style(self.estimating));
            }
            self.bar.set_length(estimate.unwrap_or(self.max));
            self.bar.set_position(round);
            self.bar.set_message(headline.to_string());
        } else if self.last_line.elapsed() >= LINE_EVERY {
            self.last_line = Instant::now();
            let secs = self.started.elapsed().as_secs_f64();
            eprintln!(
                "  {}: round {round}, {headline}, {secs:.0} s, {:.1} rounds/s{}",
                self.what,
                round as f64 / secs.max(1e-9),
                self.rounds_left()
                    .map_or(String::new(), |l| format!(", ~{l} rounds to the target"))
            );
        }
    }

    /// The run's total rounds as the rate toward the target predicts them (within the round
    /// cap), or None: then no ETA is shown, since the cap is no prediction.
    fn estimate(&self, round: u64) -> Option<u64> {
        self.rounds_left()
            .map(|left| (round + left).clamp(round, self.max))
    }

    /// Rounds until the target at the rate of the last rounds: linear in the log of the metric
    /// when it and the target are positive (geometric convergence), linear in the metric
    /// otherwise (a log error). None while the metric does not move toward the target.
    fn rounds_left(&self) -> Option<u64> {
        let (target, lower) = self.target?;
        let (&(r0, v0), &(r1, v1)) = (self.seen.front()?, self.seen.back()?);
        if r1 <= r0 {
            return None;
        }
        let logs = v0 > 0.0 && v1 > 0.0 && target > 0.0;
        let f = |v: f64| if logs { v.ln() } else { v };
        let slope = (f(v1) - f(v0)) / (r1 - r0) as f64;
        let gap = f(target) - f(v1);
        let toward = if lower { slope < 0.0 } else { slope > 0.0 };
        if gap == 0.0 || (lower && gap > 0.0) || (!lower && gap < 0.0) {
            return Some(0);
        }
        // Rounded to the nearest round: the estimate is not exact, and ceil would turn the
        // rounding error of a whole number of rounds into one more.
        toward.then(|| (gap / slope).round() as u64)
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(target: Option<(f64, bool)>) -> RoundProgress {
        Progress {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            tty: false,
            quiet: false,
        }
        .run(1000, "test", target)
    }

    #[test]
    fn the_eta_follows_the_observed_rate_toward_the_target() {
        // Geometric: the metric falls 10× every 2 rounds; 1e-2 → 1e-8 is 12 more rounds.
        let mut p = progress(Some((1e-8, true)));
        for r in 0..=4u64 {
            p.seen.push_back((r, 10f64.powf(-(r as f64) / 2.0)));
        }
        assert_eq!(p.rounds_left(), Some(12));
        // A log error (negative, linear): −10 → −25 at −1 per round is 15 rounds.
        let mut p = progress(Some((-25.0, true)));
        p.seen.extend([(0, -5.0), (5, -10.0)]);
        assert_eq!(p.rounds_left(), Some(15));
        // Moving away from the target, or no target: no estimate; past it: 0.
        let mut p = progress(Some((1e-8, true)));
        p.seen.extend([(0, 1e-3), (5, 1e-2)]);
        assert_eq!(p.rounds_left(), None);
        assert_eq!(progress(None).rounds_left(), None);
        let mut p = progress(Some((0.9, false)));
        p.seen.extend([(0, 0.5), (5, 0.95)]);
        assert_eq!(p.rounds_left(), Some(0));
    }

    #[test]
    fn no_eta_from_the_round_cap() {
        // Rule (27) alone (no target): the cap of 1000 rounds is no prediction.
        let mut p = progress(None);
        p.update(3, "x", None);
        assert_eq!(p.estimate(3), None);
        // A target approached at a steady rate: an estimate, within the cap.
        let mut p = progress(Some((1e-8, true)));
        p.seen.extend([(0, 1e-2), (2, 1e-3)]);
        assert_eq!(
            p.estimate(2),
            Some(12),
            "2 rounds done, 10 more at a decade per 2"
        );
        let mut p = progress(Some((1e-300, true)));
        p.seen.extend([(0, 1.0), (1, 0.9)]);
        assert_eq!(p.estimate(1), Some(1000), "clamped to the cap");
    }
}
