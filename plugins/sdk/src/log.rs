//! Logging through the host's `log` import (the only thing the host gives a plugin). Natively
//! (in `cargo test`) lines go to stderr.

/// Severity of a log line.
#[derive(Clone, Copy, Debug)]
pub enum Level {
    /// Very verbose.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something odd.
    Warn,
    /// Something failed.
    Error,
}

/// Emit one line; the host tags it with the plugin's name.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::wasm_apiserver::strategy::host::{self, LogLevel};
        let l = match level {
            Level::Trace => LogLevel::Trace,
            Level::Debug => LogLevel::Debug,
            Level::Info => LogLevel::Info,
            Level::Warn => LogLevel::Warn,
            Level::Error => LogLevel::Error,
        };
        host::log(l, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

/// `log(Level::Info, …)`.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// `log(Level::Warn, …)`.
pub fn warn(message: &str) {
    log(Level::Warn, message)
}

/// Route panic messages to the host log before the guest traps, so the host's 500 can name the
/// cause. Installed once, on the first hook call.
pub fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                log(Level::Error, &format!("panic: {info}"));
            }))
        });
    }
}
