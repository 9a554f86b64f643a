/// A 64-bit FNV-1a digest of `bytes`: a stable tag for content (a web file's ETag, a chess network's cache key,
/// the engine's sources in the cache's engine version), not a defence against anyone choosing the bytes.
/// Included by `lib.rs` and by the build script, which digests the engine's sources with it.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
}
