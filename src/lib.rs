//! kibitz: an analysis engine server for board games.
//!
//! The rules of every game live in [`games`], behind the [`game::Game`] trait; [`search`] is the one engine,
//! generic over it; [`pool`] runs searches on a fixed set of worker threads; [`protocols`] holds the legacy
//! engine protocols as transport-free state machines; every front end asks for evaluations through
//! [`analysis`], the one analysis path (cache, shared searches, engine choice); [`matchplay`] plays matches
//! between kibitz and external engines.

pub mod access;
pub mod analysis;
pub mod annotate;
pub mod engines;
pub mod game;
pub mod games;
pub mod http;
pub mod logging;
pub mod matchplay;
pub mod picture;
pub mod pool;
pub mod protocols;
pub mod search;
pub mod store;
pub mod tuning;

/// `eprintln!` that drops what standard error cannot take (a closed pipe, as `2>&1 | head` leaves, or a full
/// disk) instead of panicking: a message to the user is never worth the command's life.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

include!("fnv.rs");

#[cfg(test)]
mod engine_sources {
    use super::fnv1a64;
    include!("engine_sources.rs");

    /// A copy of the engine's sources under a fresh directory.
    fn copy_sources(to: &std::path::Path) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        for source in ENGINE_SOURCES {
            engine_files(&root.join(source), &mut paths).expect("list");
        }
        for path in paths {
            let target = to.join(path.strip_prefix(root).expect("under the root"));
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
            std::fs::copy(&path, &target).expect("copy");
        }
    }

    #[test]
    fn the_build_digests_the_sources_as_they_are() {
        // A source changed without the build script running again would leave the cache's engine version stale.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let digest = engine_sources_digest(root).expect("digest");
        assert_eq!(format!("{digest:016x}"), env!("KIBITZ_ENGINE_SOURCES"));
    }

    #[test]
    fn any_change_to_an_engine_source_changes_the_digest() {
        let dir = std::env::temp_dir().join(format!("kibitz-engine-sources-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_sources(&dir);
        let original = engine_sources_digest(&dir).expect("digest");
        // Where the copy lies does not matter, only what it holds.
        assert_eq!(format!("{original:016x}"), env!("KIBITZ_ENGINE_SOURCES"));
        let edit = |path: &str, change: &dyn Fn(&mut Vec<u8>)| {
            let file = dir.join(path);
            let before = std::fs::read(&file).expect("read");
            let mut after = before.clone();
            change(&mut after);
            std::fs::write(&file, &after).expect("write");
            let changed = engine_sources_digest(&dir).expect("digest");
            std::fs::write(&file, &before).expect("restore");
            assert_ne!(changed, original, "{path}");
        };
        edit("src/search/params.rs", &|b| b.push(b'\n'));
        edit("src/game.rs", &|b| b[0] ^= 1);
        edit("src/games/chess/net.bin", &|b| {
            let last = b.len() - 1;
            b[last] = b[last].wrapping_add(1)
        });
        // A new file counts too, and the digest is back where it was once everything is restored.
        std::fs::write(dir.join("src/games/extra.rs"), b"").expect("write");
        assert_ne!(engine_sources_digest(&dir).expect("digest"), original);
        std::fs::remove_file(dir.join("src/games/extra.rs")).expect("remove");
        assert_eq!(engine_sources_digest(&dir).expect("digest"), original);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
