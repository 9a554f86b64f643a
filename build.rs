//! The migrations are embedded by `sqlx::migrate!`; a new migration file must rebuild the crate.
//!
//! `KIBITZ_ENGINE_SOURCES` is a digest of the sources that decide what a search finds (`src/engine_sources.rs`):
//! the cache keeps kibitz's own results under the crate's version and this digest (`store::ENGINE_VERSION`), so a
//! changed engine never answers with an older one's results, even where the version number was not raised.

include!("src/fnv.rs");
include!("src/engine_sources.rs");

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    for source in ENGINE_SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    // The directory of the crate being built, asked when the script runs: a script built once for one checkout and
    // reused by another's build (a shared target directory) must digest that other's sources.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts");
    let digest = engine_sources_digest(std::path::Path::new(&root))
        .unwrap_or_else(|e| panic!("digesting the engine's sources: {e}"));
    println!("cargo:rustc-env=KIBITZ_ENGINE_SOURCES={digest:016x}");
}
