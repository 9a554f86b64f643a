//! API keys as the store keeps them: a name, the SHA-256 digest of the key (never the key), the key's rate
//! limit and daily annotation quota, and when it was made and revoked. The store neither makes nor checks
//! keys (see [`crate::access`]); it keeps the rows and charges quotas atomically.

/// A key to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewKey {
    pub name: String,
    /// The key's SHA-256 digest, 64 lowercase hex digits.
    pub hash: String,
    /// Token-bucket refill, cost units per second.
    pub rate: f64,
    /// Token-bucket size, cost units.
    pub burst: u32,
    /// Positions the key's annotation jobs may evaluate per UTC day (`None`: no quota).
    pub quota_positions: Option<u64>,
}

/// A stored key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRow {
    pub name: String,
    pub hash: String,
    pub rate: f64,
    pub burst: u32,
    pub quota_positions: Option<u64>,
    pub created_ms: i64,
    /// When it was revoked; a revoked key authenticates nobody.
    pub revoked_ms: Option<i64>,
}
