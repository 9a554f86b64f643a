//! Who a client is and how much it may ask: API keys, token buckets, costs, daily quotas and per-address
//! connection counts. Shared by the HTTP API and the GUIDE gateway; no HTTP or protocol code here.
//!
//! A key is 32 bytes from the operating system's random generator, shown once as `kbz_` and 64 hex digits;
//! the store keeps only its SHA-256 digest, so a key is checked by hashing what the client sent and looking
//! the digest up.
//!
//! Rate limits are token buckets of this module's own rather than the `governor` crate: requests have
//! costs that are only known after the request is read (a search by its limits, an annotation by its
//! positions) and a cache hit is refunded after the answer, which a plain bucket of a few lines does
//! directly; the headers want the tokens left and the time to a full bucket, which it also has at hand.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::search::Limits;
use crate::store::{KeyRow, Store, StoreError};

/// What the server asks of clients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// Keys are not read; every client is limited by its address.
    #[default]
    Off,
    /// A key is optional; a key that is sent must be valid (401 otherwise).
    Optional,
    /// Every API request needs a valid key (401 otherwise).
    Required,
}

/// The prefix of every key (it makes a leaked key easy to recognise in logs and code searches).
pub const KEY_PREFIX: &str = "kbz_";

/// A fresh key: [`KEY_PREFIX`] and 32 random bytes in hex.
pub fn generate_key() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{KEY_PREFIX}{}", hex(&bytes)))
}

/// The digest the store keeps of `key`: SHA-256, 64 lowercase hex digits.
pub fn digest(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Why a key was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("unknown API key")]
    Unknown,
    #[error("the API key `{0}` was revoked")]
    Revoked(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The key row for the key a client sent, if it is valid.
pub async fn check_key(store: &Store, key: &str) -> Result<KeyRow, KeyError> {
    // Anything longer than a key cannot be one; it is not even hashed.
    if key.is_empty() || key.len() > 256 {
        return Err(KeyError::Unknown);
    }
    check_digest(store, &digest(key)).await
}

/// The key row for a key's digest (a key checked before, looked at again), if the key is still valid.
pub async fn check_digest(store: &Store, digest: &str) -> Result<KeyRow, KeyError> {
    match store.key_by_hash(digest).await? {
        None => Err(KeyError::Unknown),
        Some(row) if row.revoked_ms.is_some() => Err(KeyError::Revoked(row.name)),
        Some(row) => Ok(row),
    }
}

/// A token bucket's settings: it holds at most `burst` units and refills at `rate` units per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub rate: f64,
    pub burst: u32,
}

impl Rate {
    /// Whether this rate limits anything (a zero rate or burst means no limit).
    pub fn limits(&self) -> bool {
        self.rate > 0.0 && self.burst > 0
    }
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
    rate: Rate,
}

impl Bucket {
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate.rate).min(f64::from(self.rate.burst));
        self.at = now;
    }

    fn full(&self) -> bool {
        self.tokens >= f64::from(self.rate.burst)
    }

    fn status(&self) -> LimitStatus {
        let burst = f64::from(self.rate.burst);
        let missing = (burst - self.tokens).max(0.0);
        LimitStatus {
            limit: self.rate.burst,
            remaining: self.tokens.max(0.0).floor() as u32,
            reset_s: (missing / self.rate.rate).ceil() as u64,
        }
    }
}

/// What the `RateLimit-*` headers say: the bucket's size, the units left, and the seconds until it is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitStatus {
    pub limit: u32,
    pub remaining: u32,
    pub reset_s: u64,
}

/// A refused charge: the bucket's state and the seconds to wait before the same charge would pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limited {
    pub status: LimitStatus,
    pub retry_after_s: u64,
}

/// Buckets kept before full ones (which hold nothing worth keeping) are dropped.
const MAX_BUCKETS: usize = 100_000;

/// Token buckets by client id. Bounded: past [`MAX_BUCKETS`] the full buckets are forgotten (a forgotten
/// bucket comes back full, which is what it was), and if that is not enough the fullest ones go.
#[derive(Default)]
pub struct Limiter {
    buckets: Mutex<HashMap<Arc<str>, Bucket>>,
}

impl Limiter {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Bucket>> {
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take `cost` units from `client`'s bucket if it has them. A cost above the bucket's size passes once the
    /// bucket is full and leaves it in debt for the rest (so a large annotation job can be made at all, and is
    /// paid for in full: nothing else passes until the bucket has refilled past the debt).
    pub fn charge(&self, client: &Arc<str>, rate: Rate, cost: u32) -> Result<LimitStatus, Limited> {
        self.charge_rest(client, rate, 0, cost)
    }

    /// Take the rest of a request's cost, `cost` units, after the `paid` units it was charged when it came: the
    /// whole (`paid + cost`) passes as [`Limiter::charge`] would have passed it in one charge, so a whole above
    /// the bucket's size passes when the bucket was full as the request came. Refused, the `paid` units go back
    /// (a refused request costs nothing) and the wait is for the whole.
    pub fn charge_rest(&self, client: &Arc<str>, rate: Rate, paid: u32, cost: u32) -> Result<LimitStatus, Limited> {
        let now = Instant::now();
        let mut buckets = self.lock();
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(client) {
            prune(&mut buckets, now);
        }
        let bucket =
            buckets.entry(Arc::clone(client)).or_insert(Bucket { tokens: f64::from(rate.burst), at: now, rate });
        if bucket.rate != rate {
            // The key's limits changed (a key made anew with the same name): keep the tokens, within bounds.
            bucket.rate = rate;
        }
        bucket.refill(now);
        let whole = f64::from(paid.saturating_add(cost).min(rate.burst));
        if bucket.tokens >= whole - f64::from(paid) {
            bucket.tokens -= f64::from(cost);
            Ok(bucket.status())
        } else {
            bucket.tokens = (bucket.tokens + f64::from(paid)).min(f64::from(rate.burst));
            let wait = ((whole - bucket.tokens) / rate.rate).ceil().max(1.0) as u64;
            Err(Limited { status: bucket.status(), retry_after_s: wait })
        }
    }

    /// Give `units` back (a request that cost less than it was charged, such as a cache hit).
    pub fn refund(&self, client: &Arc<str>, units: u32) {
        if let Some(bucket) = self.lock().get_mut(client) {
            bucket.refill(Instant::now());
            bucket.tokens = (bucket.tokens + f64::from(units)).min(f64::from(bucket.rate.burst));
        }
    }

    /// Take `units` whatever the bucket holds, leaving it in debt if it must: the rest of a search's cost, known
    /// only once it has run ([`time_cost`]).
    pub fn debit(&self, client: &Arc<str>, units: u32) {
        if let Some(bucket) = self.lock().get_mut(client) {
            bucket.refill(Instant::now());
            bucket.tokens -= f64::from(units);
        }
    }

    /// The bucket's state now (a full one when it has never been charged).
    pub fn status(&self, client: &Arc<str>, rate: Rate) -> LimitStatus {
        let now = Instant::now();
        match self.lock().get_mut(client) {
            Some(bucket) => {
                bucket.refill(now);
                bucket.status()
            }
            None => LimitStatus { limit: rate.burst, remaining: rate.burst, reset_s: 0 },
        }
    }

    /// Buckets held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn prune(buckets: &mut HashMap<Arc<str>, Bucket>, now: Instant) {
    buckets.retain(|_, b| {
        b.refill(now);
        !b.full()
    });
    if buckets.len() >= MAX_BUCKETS {
        let mut fill: Vec<(Arc<str>, f64)> =
            buckets.iter().map(|(k, b)| (Arc::clone(k), b.tokens / f64::from(b.rate.burst))).collect();
        fill.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (key, _) in fill.into_iter().take(MAX_BUCKETS / 10) {
            buckets.remove(&key);
        }
    }
}

/// An unlimited search (an infinite analysis) is charged for this much search time when it starts, and again
/// each time it has run this long.
pub const INFINITE_PERIOD: Duration = Duration::from_secs(4);

/// The cost of a search in bucket units, by the first limit it stops at: a quarter second of search time,
/// a million nodes, or four plies of depth count one unit each (at least one), times the lines asked for
/// (each further line adds half); without a limit, [`INFINITE_PERIOD`] of time. A cache hit is refunded
/// down to [`CHEAP`].
pub fn search_cost(limits: &Limits, multipv: u32) -> u32 {
    let by_time = limits.movetime.map(quarters);
    let by_nodes = limits.nodes.map(|n| n.div_ceil(1_000_000));
    let by_depth = limits.depth.map(|d| u64::from(d).div_ceil(4));
    let base = [by_time, by_nodes, by_depth].into_iter().flatten().min().unwrap_or(quarters(INFINITE_PERIOD));
    with_lines(base, multipv)
}

/// What `searched` of search time costs by [`search_cost`]'s time rate, with `multipv` lines: a search that ran
/// longer than its limits were priced at (a depth reached only after a minute) pays the rest by this when it
/// answers ([`Limiter::debit`]).
pub fn time_cost(searched: Duration, multipv: u32) -> u32 {
    with_lines(quarters(searched), multipv)
}

/// Quarter seconds in `t`, rounded up.
fn quarters(t: Duration) -> u64 {
    t.as_millis().div_ceil(250) as u64
}

/// `base` units (at least one) with half as much again for each line beyond the first.
fn with_lines(base: u64, multipv: u32) -> u32 {
    let lines = 2 + u64::from(multipv.max(1) - 1);
    u32::try_from(base.max(1).saturating_mul(lines) / 2).unwrap_or(u32::MAX).max(1)
}

/// What every API request costs (and what a cache hit costs in all).
pub const CHEAP: u32 = 1;

/// The cost of an annotation job in bucket units: one per ten positions searched at the game's default
/// limits (`usual`) or lighter ones, and in proportion to [`search_cost`] for heavier limits (a job of
/// minute-long searches costs what they would cost asked one by one, at the same discount), at least one.
pub fn annotation_cost(positions: u64, limits: &Limits, usual: &Limits) -> u32 {
    let base = u64::from(search_cost(usual, 1)).max(1);
    let each = u64::from(search_cost(limits, 1)).max(base);
    u32::try_from(positions.saturating_mul(each).div_ceil(base.saturating_mul(10))).unwrap_or(u32::MAX).max(1)
}

/// Days since 1970-01-01 (UTC) now, and the seconds left in this day.
pub fn utc_day() -> (i64, u64) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs();
    ((now / 86_400) as i64, 86_400 - now % 86_400)
}

/// What one client's limits are counted by: its IPv4 address, or its IPv6 address's /64 network (the
/// smallest one a provider hands a subscriber: one client may use any of its 2^64 addresses, and counted per
/// address it would have as many buckets and connection allowances). An IPv4 address written as IPv6
/// (`::ffff:a.b.c.d`, a dual-stack socket's) is that IPv4 address.
pub fn limited_network(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
    }
}

/// The name of a client without a key for its bucket: `ip:ADDRESS`, or `ip:NETWORK/64` for IPv6.
pub fn address_client_id(address: IpAddr) -> String {
    match limited_network(address) {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => format!("ip:{v6}/64"),
    }
}

/// Open connections per address (per [`limited_network`]), with a most per address. A [`Slot`] counts one until dropped.
#[derive(Default)]
pub struct PerAddress {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted by [`PerAddress::take`].
pub struct Slot {
    owner: Arc<PerAddress>,
    address: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.owner.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.address);
            }
        }
    }
}

impl PerAddress {
    /// Count one more connection from `address` unless it has `max` open already (`max` 0: no limit).
    pub fn take(self: &Arc<Self>, address: IpAddr, max: usize) -> Option<Slot> {
        let address = limited_network(address);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(address).or_insert(0);
        if max > 0 && *n >= max {
            return None;
        }
        *n += 1;
        Some(Slot { owner: Arc::clone(self), address })
    }

    /// Connections open from `address`.
    pub fn open(&self, address: IpAddr) -> usize {
        let address = limited_network(address);
        self.open.lock().unwrap_or_else(|e| e.into_inner()).get(&address).copied().unwrap_or(0)
    }
}

/// A proxy whose `X-Forwarded-For` is believed (`--trusted-proxy`): an address, or a network as `ADDR/BITS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustedProxy {
    net: std::net::IpAddr,
    bits: u8,
}

impl std::str::FromStr for TrustedProxy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (addr, bits) = match text.split_once('/') {
            Some((addr, bits)) => (addr, Some(bits)),
            None => (text, None),
        };
        let net: std::net::IpAddr =
            addr.parse().map_err(|_| format!("`{text}`: not an IP address or a network ADDR/BITS"))?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => b
                .parse::<u8>()
                .ok()
                .filter(|&b| b <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {max}"))?,
        };
        Ok(TrustedProxy { net, bits })
    }
}

impl TrustedProxy {
    pub fn contains(&self, addr: std::net::IpAddr) -> bool {
        let addr = match addr {
            std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, std::net::IpAddr::V4),
            v4 => v4,
        };
        let masked = |bytes: &[u8], bits: u8| -> Vec<u8> {
            bytes
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    let keep = (u32::from(bits)).saturating_sub(8 * i as u32).min(8);
                    if keep == 0 { 0 } else { b & (0xffu8 << (8 - keep)) }
                })
                .collect()
        };
        match (self.net, addr) {
            (std::net::IpAddr::V4(n), std::net::IpAddr::V4(a)) => {
                masked(&n.octets(), self.bits) == masked(&a.octets(), self.bits)
            }
            (std::net::IpAddr::V6(n), std::net::IpAddr::V6(a)) => {
                masked(&n.octets(), self.bits) == masked(&a.octets(), self.bits)
            }
            _ => false,
        }
    }
}

/// The client's address: the connection's peer, unless the peer is a trusted proxy; then the nearest address of
/// `X-Forwarded-For` (read from the right, each proxy appending the address it saw) that is not itself a trusted
/// proxy. A header that cannot be read leaves the peer: nobody is believed beyond the proxies named.
pub fn client_address<'a>(
    peer: std::net::IpAddr,
    forwarded_for: impl Iterator<Item = &'a str>,
    trusted: &[TrustedProxy],
) -> std::net::IpAddr {
    let is_trusted = |a: std::net::IpAddr| trusted.iter().any(|t| t.contains(a));
    if !is_trusted(peer) {
        return peer;
    }
    let hops: Vec<&str> = forwarded_for.flat_map(|value| value.split(',')).map(str::trim).collect();
    let mut address = peer;
    for hop in hops.iter().rev() {
        let Ok(hop) = hop.parse::<std::net::IpAddr>() else { return address };
        address = hop;
        if !is_trusted(hop) {
            break;
        }
    }
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_limited_by_their_64_network() {
        let ip = |t: &str| t.parse::<IpAddr>().expect("ip");
        assert_eq!(limited_network(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(limited_network(ip("::ffff:198.51.100.7")), ip("198.51.100.7"));
        assert_eq!(limited_network(ip("198.51.100.7")), ip("198.51.100.7"));
        assert_eq!(address_client_id(ip("2001:db8:1:2::9")), "ip:2001:db8:1:2::/64");
        assert_eq!(address_client_id(ip("::ffff:198.51.100.7")), "ip:198.51.100.7");
        // Two addresses of one /64 share their connections' allowance; another /64 has its own.
        let open = Arc::new(PerAddress::default());
        let first = open.take(ip("2001:db8:1:2::1"), 2).expect("first");
        let _second = open.take(ip("2001:db8:1:2:ffff::2"), 2).expect("second");
        assert!(open.take(ip("2001:db8:1:2::3"), 2).is_none(), "a third from the same /64");
        assert!(open.take(ip("2001:db8:1:3::1"), 2).is_some(), "another /64");
        drop(first);
        assert_eq!(open.open(ip("2001:db8:1:2::77")), 1);
    }

    #[test]
    fn the_client_behind_a_trusted_proxy_is_read_from_x_forwarded_for() {
        let trusted: Vec<TrustedProxy> =
            ["10.0.0.5", "172.28.0.0/16"].iter().map(|t| t.parse().expect("net")).collect();
        let ip = |t: &str| t.parse::<std::net::IpAddr>().expect("ip");
        // Not a trusted peer: its header is not believed.
        assert_eq!(client_address(ip("198.51.100.7"), ["203.0.113.9"].into_iter(), &trusted), ip("198.51.100.7"));
        // The proxy appends what it saw: the last entry that is no trusted proxy is the client.
        assert_eq!(client_address(ip("10.0.0.5"), ["1.2.3.4, 203.0.113.9"].into_iter(), &trusted), ip("203.0.113.9"));
        assert_eq!(
            client_address(ip("10.0.0.5"), ["203.0.113.9", "172.28.3.4"].into_iter(), &trusted),
            ip("203.0.113.9"),
            "two proxies, two headers"
        );
        // No header, or one that cannot be read: the peer.
        assert_eq!(client_address(ip("10.0.0.5"), [].into_iter(), &trusted), ip("10.0.0.5"));
        assert_eq!(client_address(ip("10.0.0.5"), ["bogus"].into_iter(), &trusted), ip("10.0.0.5"));
        // IPv4 seen as IPv6-mapped is still the proxy.
        assert!(trusted[0].contains(ip("::ffff:10.0.0.5")));
        assert!(!trusted[1].contains(ip("172.29.0.1")));
        assert!("10.0.0.0/33".parse::<TrustedProxy>().is_err() && "x".parse::<TrustedProxy>().is_err());
        // No proxy trusted: always the peer.
        assert_eq!(client_address(ip("10.0.0.5"), ["203.0.113.9"].into_iter(), &[]), ip("10.0.0.5"));
    }

    #[test]
    fn keys_are_random_and_only_their_digest_is_compared() {
        let a = generate_key().expect("random");
        let b = generate_key().expect("random");
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX) && a.len() == KEY_PREFIX.len() + 64);
        assert_eq!(digest(&a), digest(&a));
        assert_eq!(digest(&a).len(), 64);
        // The SHA-256 test vector of "abc".
        assert_eq!(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn a_bucket_refuses_past_its_burst_and_says_how_long_to_wait() {
        let limiter = Limiter::default();
        let client: Arc<str> = Arc::from("key:a");
        let rate = Rate { rate: 0.5, burst: 3 };
        assert_eq!(limiter.charge(&client, rate, 2).map(|s| s.remaining), Ok(1));
        let refused = limiter.charge(&client, rate, 3).expect_err("one unit left");
        // Two more units at half a unit per second (the bucket may have refilled a hair meanwhile).
        assert!((3..=4).contains(&refused.retry_after_s), "{refused:?}");
        assert_eq!(refused.status.limit, 3);
        // Another client has its own bucket.
        assert!(limiter.charge(&Arc::from("key:b"), rate, 3).is_ok());
        // A refund gives units back, never more than the burst.
        limiter.refund(&client, 10);
        assert_eq!(limiter.status(&client, rate).remaining, 3);
        // A cost above the burst passes on a full bucket, which is then in debt for the rest: 997 units, paid
        // back at half a unit per second before even one unit passes again.
        assert!(limiter.charge(&client, rate, 1_000).is_ok());
        let status = limiter.status(&client, rate);
        assert_eq!(status.remaining, 0);
        assert!((1_999..=2_000).contains(&status.reset_s), "{status:?}");
        let refused = limiter.charge(&client, rate, 1).expect_err("in debt");
        assert!((1_995..=1_996).contains(&refused.retry_after_s), "{refused:?}");
        // A large cost on a bucket that is not full waits for it to be full.
        let other: Arc<str> = Arc::from("key:c");
        assert!(limiter.charge(&other, rate, 1).is_ok());
        let refused = limiter.charge(&other, rate, 1_000).expect_err("not full");
        assert!((2..=3).contains(&refused.retry_after_s), "{refused:?}");
    }

    #[test]
    fn the_rest_of_a_cost_passes_as_the_whole_would() {
        // A request pays one unit as it comes and the rest once its limits are read: a whole above the
        // bucket's size passes when the bucket was full as the request came (the rest alone never finds the
        // bucket full, since the first unit has gone).
        let limiter = Limiter::default();
        let client: Arc<str> = Arc::from("key:a");
        let rate = Rate { rate: 0.5, burst: 3 };
        assert!(limiter.charge(&client, rate, 1).is_ok());
        assert!(limiter.charge_rest(&client, rate, 1, 9).is_ok());
        let status = limiter.status(&client, rate);
        assert_eq!(status.remaining, 0);
        assert!((19..=20).contains(&status.reset_s), "in debt by 7 units: {status:?}");
        // Within the bucket's size, the rest needs what is left of the whole.
        let other: Arc<str> = Arc::from("key:b");
        assert!(limiter.charge(&other, rate, 1).is_ok());
        assert!(limiter.charge_rest(&other, rate, 1, 1).is_ok());
        assert_eq!(limiter.status(&other, rate).remaining, 1);
        // Refused, the unit paid comes back, and the wait is for the whole: 3 units from the 1 left once the
        // unit paid is back, at half a unit a second.
        assert!(limiter.charge(&other, rate, 1).is_ok());
        let refused = limiter.charge_rest(&other, rate, 1, 2).expect_err("one unit left of three");
        assert_eq!(refused.status.remaining, 1);
        assert!((3..=4).contains(&refused.retry_after_s), "{refused:?}");
    }

    #[test]
    fn costs_follow_the_limits() {
        assert_eq!(search_cost(&Limits::depth(4), 1), 1);
        assert_eq!(search_cost(&Limits::depth(20), 1), 5);
        assert_eq!(search_cost(&Limits::depth(20), 3), 10);
        assert_eq!(search_cost(&Limits::movetime(Duration::from_secs(2)), 1), 8);
        assert_eq!(search_cost(&Limits::nodes(10_000), 1), 1);
        assert_eq!(search_cost(&Limits::infinite(), 1), search_cost(&Limits::movetime(INFINITE_PERIOD), 1));
        let usual = Limits::depth(10);
        assert_eq!(annotation_cost(1, &usual, &usual), 1);
        assert_eq!(annotation_cost(95, &usual, &usual), 10);
        assert_eq!(annotation_cost(95, &Limits::depth(4), &usual), 10, "at least the usual price");
        assert_eq!(annotation_cost(95, &Limits::depth(20), &usual), 16);
        // Found by an audit: eleven positions of a minute each cost 2 units where one such analysis cost 240.
        assert_eq!(annotation_cost(11, &Limits::movetime(Duration::from_secs(60)), &usual), 88);
        assert_eq!(annotation_cost(u64::MAX, &Limits::depth(64), &usual), u32::MAX);
    }

    #[test]
    fn per_address_counts_until_dropped() {
        let per = Arc::new(PerAddress::default());
        let ip: IpAddr = "10.0.0.1".parse().expect("ip");
        let first = per.take(ip, 2).expect("one");
        let _second = per.take(ip, 2).expect("two");
        assert!(per.take(ip, 2).is_none());
        assert!(per.take("10.0.0.2".parse().expect("ip"), 2).is_some());
        drop(first);
        assert!(per.take(ip, 2).is_some());
    }
}
