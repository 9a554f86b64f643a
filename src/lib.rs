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

/// A 64-bit FNV-1a digest of `bytes`: a stable tag for content (a web file's ETag, a chess network's cache key),
/// not a defence against anyone choosing the bytes.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
}
