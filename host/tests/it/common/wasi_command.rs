//! Run a WASI command component (a `wasm32-wasip2` binary) in wasmtime with the server's engine
//! settings (component model, epoch interruption on — the deadline is never reached, but every
//! check is paid as in the server); used by the CEL tests inside a component and by the
//! `cel_component` bench.

use std::path::Path;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{ResourceTable, WasiCtx, WasiCtxView, WasiView};

struct State {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Run the command at `path` with `args` (the program name first): whether it exited with
/// success, and what it wrote to stdout and stderr (each up to 4 MiB).
pub fn run(path: &Path, args: &[&str]) -> (bool, String, String) {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    let engine = Engine::new(&config).unwrap();
    let component = Component::from_file(&engine, path)
        .unwrap_or_else(|e| panic!("{}: {e} (run plugins/build.sh)", path.display()));
    let mut linker: Linker<State> = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    let (stdout, stderr) = (
        MemoryOutputPipe::new(4 << 20),
        MemoryOutputPipe::new(4 << 20),
    );
    let wasi = WasiCtx::builder()
        .args(args)
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .build();
    let table = ResourceTable::new();
    let mut store = Store::new(&engine, State { wasi, table });
    store.set_epoch_deadline(u64::MAX / 2);
    let command =
        wasmtime_wasi::p2::bindings::sync::Command::instantiate(&mut store, &component, &linker)
            .unwrap();
    let ok = matches!(command.wasi_cli_run().call_run(&mut store), Ok(Ok(())));
    let text = |p: &MemoryOutputPipe| String::from_utf8_lossy(&p.contents()).into_owned();
    (ok, text(&stdout), text(&stderr))
}
