// The digest of the engine's sources (the build script's `KIBITZ_ENGINE_SOURCES`, in `store::ENGINE_VERSION`).
// Included by the build script and by the library's tests, which check that the build's digest is the digest of
// the sources as they are; the including scope provides `fnv1a64`.

/// The files and directories, from the crate's root, whose contents decide what a search finds: the search, the
/// games' rules and evaluations with their data files, the game interface.
const ENGINE_SOURCES: [&str; 3] = ["src/game.rs", "src/games", "src/search"];

/// Every file under `path` (itself if it is one).
fn engine_files(path: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            engine_files(&entry?.path(), out)?;
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// The digest of [`ENGINE_SOURCES`] under `root`: each file in order of its path (written with `/`), its path,
/// its length and its bytes.
fn engine_sources_digest(root: &std::path::Path) -> std::io::Result<u64> {
    let mut paths = Vec::new();
    for source in ENGINE_SOURCES {
        engine_files(&root.join(source), &mut paths)?;
    }
    let mut named = Vec::new();
    for path in paths {
        let relative = path.strip_prefix(root).map_err(std::io::Error::other)?;
        let parts: Option<Vec<&str>> = relative.iter().map(|part| part.to_str()).collect();
        let name = parts.ok_or_else(|| std::io::Error::other(format!("{} is not UTF-8", path.display())))?.join("/");
        named.push((name, path));
    }
    named.sort();
    let mut bytes = Vec::new();
    for (name, path) in named {
        let contents = std::fs::read(&path)?;
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&(contents.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&contents);
    }
    Ok(fnv1a64(&bytes))
}
