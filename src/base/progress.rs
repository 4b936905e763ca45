//! Progress bars for long work: drawn on a terminal (stderr), silent when
//! stderr is piped or `--quiet` is given.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Creates progress bars when they should be shown.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    /// Bars on when stderr is a terminal and `quiet` is false.
    pub fn new(quiet: bool) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
        }
    }

    /// Never draws (tests, library use).
    pub fn hidden() -> Self {
        Progress { enabled: false }
    }

    /// A byte-count bar for reading `total_bytes`.
    pub fn bytes(self, message: &str, total_bytes: u64) -> ProgressBar {
        self.bar(
            message,
            total_bytes,
            "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
        )
    }

    /// A bar counting `total` steps.
    pub fn steps(self, message: &str, total: u64) -> ProgressBar {
        self.bar(message, total, "{msg} [{bar:40}] {pos}/{len} (eta {eta})")
    }

    /// A spinner with elapsed time for work of unknown length.
    pub fn spinner(self, message: &str) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let spinner = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            spinner.set_style(style);
        }
        spinner.set_message(message.to_string());
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        spinner
    }

    fn bar(self, message: &str, total: u64, template: &str) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        }
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(message.to_string());
        bar
    }
}
