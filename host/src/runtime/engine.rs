//! The one `Engine` of the process: the component model, epoch interruption driven by a ticker
//! thread, and the pooling allocator when the machine lets it reserve its address space (probed
//! at start, as `wasmtime serve` does; otherwise on-demand allocation).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances: the granularity of deadlines and of yielding to other calls.
pub const TICK: Duration = Duration::from_millis(10);

/// The memory a call may use unless its extension asks for another amount (`memory_mb`), and the
/// most an extension may ask for unless the operator says otherwise: a JavaScript or Python
/// hello world runs in the default (measured: see docs/extensions.md).
pub const DEFAULT_MEMORY_BYTES: usize = 64 * 1024 * 1024;
pub const DEFAULT_MAX_MEMORY_BYTES: usize = 256 * 1024 * 1024;

fn base_config() -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    // Extensions are WASI 0.2 components, whose host calls block on the store's fiber. With
    // concurrency support on (wasmtime's default), every store is made with the bookkeeping of
    // the component model's async ABI, and every host call pushes a task into a table and takes
    // it out again. A component that uses that ABI fails to compile, so its upload is refused.
    config.concurrency_support(false);
    config
}

/// Builds the engine, whose instances may grow to `max_memory_bytes` (each store is held to its
/// extension's own cap by `StoreLimits`); `pooling` tells which allocator it got.
pub fn build(max_memory_bytes: usize) -> anyhow::Result<(Engine, bool)> {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(1000).total_core_instances(2000).total_memories(2000).total_tables(2000);
    pool.max_memory_size(max_memory_bytes);
    // Resetting an instance's memory for the next call: by default its pages go back to the
    // kernel (madvise), which costs a TLB shootdown on every core and page faults on the next
    // call. Instead the pages it dirtied in its first 2 MiB (found with the PAGEMAP_SCAN ioctl
    // where the kernel has it, Linux 6.7+) are reset in place and stay resident; what lies beyond
    // is still returned, in batches. Profiled on a trivial guest: the shootdowns and faults were
    // a large share of a call.
    pool.linear_memory_keep_resident(2 << 20).table_keep_resident(64 << 10);
    pool.pagemap_scan(wasmtime::Enabled::Auto);
    pool.decommit_batch_size(32);
    let mut pooled = base_config();
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    match Engine::new(&pooled) {
        Ok(engine) => Ok((engine, true)),
        Err(e) => {
            tracing::warn!(error = %e, "the pooling allocator is not available here; instances are allocated on demand");
            Ok((Engine::new(&base_config())?, false))
        }
    }
}

/// Advances the engine's epoch every `TICK` until `stop` is set.
pub fn spawn_ticker(engine: Engine, stop: Arc<AtomicBool>) {
    std::thread::Builder::new()
        .name("herald-epoch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                engine.increment_epoch();
            }
        })
        .expect("the epoch thread starts");
}
