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

/// A stored key read from a row of `SELECT name, hash, rate, burst, quota_positions, created_ms, revoked_ms`,
/// on either backend.
pub(super) fn key_row<R: sqlx::Row>(row: &R) -> Result<KeyRow, super::StoreError>
where
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> f64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: String| super::StoreError::Corrupt { what: format!("api key: {e}") };
    let burst: i64 = row.try_get("burst").map_err(|e| corrupt(e.to_string()))?;
    let quota: Option<i64> = row.try_get("quota_positions").map_err(|e| corrupt(e.to_string()))?;
    Ok(KeyRow {
        name: row.try_get("name").map_err(|e| corrupt(e.to_string()))?,
        hash: row.try_get("hash").map_err(|e| corrupt(e.to_string()))?,
        rate: row.try_get("rate").map_err(|e| corrupt(e.to_string()))?,
        burst: u32::try_from(burst).map_err(|_| corrupt(format!("burst {burst}")))?,
        quota_positions: quota.map(|q| u64::try_from(q).unwrap_or(0)),
        created_ms: row.try_get("created_ms").map_err(|e| corrupt(e.to_string()))?,
        revoked_ms: row.try_get("revoked_ms").map_err(|e| corrupt(e.to_string()))?,
    })
}

/// The columns [`key_row`] reads.
pub(super) const KEY_COLUMNS: &str =
    "SELECT name, hash, rate, burst, quota_positions, created_ms, revoked_ms FROM api_keys";
