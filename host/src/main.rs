use clap::Parser;

/// mimalloc instead of glibc malloc: the server decodes and drops many small JSON values
/// (a 1 KiB object is ~11 KB of `serde_json::Value` nodes); with glibc, decoding and dropping
/// a 10,000-object list took 118 + 53 ms, with mimalloc 79 + 33 ms (BENCHMARKS.md, Storage).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = wasm_apiserver::cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour codes only for a terminal: a file, a pipe or a log collector gets plain text.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if cli.serve.log_format == "json" {
        logs.json().init();
    } else {
        logs.init();
    }
    match wasm_apiserver::app::run(cli) {
        Ok(code) => std::process::ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
