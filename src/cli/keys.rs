//! `kibitz keys`: make, list and revoke API keys in the store a server uses (`--db`, as `kibitz serve`).
//! A key is printed once, when it is made; the store keeps only its SHA-256 digest.

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use kibitz::store::{NewKey, Store};

#[derive(Args)]
pub struct DbArg {
    /// The store: a SQLite file path or an sqlx URL (the one `kibitz serve --db` uses).
    #[arg(long, env = "KIBITZ_DB", default_value = "./kibitz.db")]
    pub db: String,
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Make a key and print it (once: only its digest is stored).
    Create {
        /// A name for the key (letters, digits, `.`, `_`, `-`; at most 64): it names the key in `keys list`,
        /// `keys revoke` and the logs.
        #[arg(long)]
        name: String,
        /// Cost units per second the key may spend (a cheap request costs 1; see README, "Keys and limits").
        #[arg(long, default_value_t = 10.0)]
        rate: f64,
        /// Cost units the key may spend at once (its bucket's size).
        #[arg(long, default_value_t = 100)]
        burst: u32,
        /// Positions the key's annotation jobs may evaluate per UTC day (default: no quota).
        #[arg(long)]
        quota_positions: Option<u64>,
        #[command(flatten)]
        db: DbArg,
    },
    /// List the keys (names and limits; keys themselves are not stored).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Revoke a key: requests with it are refused from now on.
    Revoke {
        name: String,
        #[command(flatten)]
        db: DbArg,
    },
}

pub fn run(command: KeysCommand) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let db = match &command {
            KeysCommand::Create { db, .. } | KeysCommand::List { db } | KeysCommand::Revoke { db, .. } => &db.db,
        };
        // Only making a key may make the store (a server's new one); listing and revoking read what is there.
        let store = match &command {
            KeysCommand::Create { .. } => Store::open(db).await,
            _ => Store::open_existing(db).await,
        }
        .with_context(|| format!("cannot open the store `{db}`"))?;
        let result = run_with(&store, command).await;
        store.close().await;
        result
    })
}

fn check_name(name: &str) -> Result<()> {
    let fine =
        !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !fine {
        bail!("--name `{name}`: use 1 to 64 letters, digits, `.`, `_` or `-`");
    }
    Ok(())
}

/// The least rate a key may have (cost units per second).
const MIN_RATE: f64 = 0.001;

async fn run_with(store: &Store, command: KeysCommand) -> Result<()> {
    match command {
        KeysCommand::Create { name, rate, burst, quota_positions, .. } => {
            check_name(&name)?;
            // Below a unit in 1,000 s a bucket would take years to refill (and its headers would say so).
            if !(rate.is_finite() && rate >= MIN_RATE) {
                bail!("--rate {rate}: give a number of cost units per second, at least {MIN_RATE}");
            }
            if burst == 0 {
                bail!("--burst 0: a key must be able to spend at least one unit");
            }
            let exists =
                || format!("a key named `{name}` exists already (revoked keys keep their names); choose another name");
            if store.keys().await?.iter().any(|k| k.name == name) {
                bail!(exists());
            }
            let key = kibitz::access::generate_key().context("the system's random generator failed")?;
            let row = NewKey { name: name.clone(), hash: kibitz::access::digest(&key), rate, burst, quota_positions };
            // The key is shown only now: written before it is stored, so that a key nobody could see is never
            // made (and its name kept from use).
            let mut out = std::io::stdout().lock();
            writeln!(out, "{key}")
                .and_then(|()| out.flush())
                .context("cannot write the key to standard output; no key was made")?;
            if !store.create_key(&row).await? {
                bail!("{}; the key written above was not made", exists());
            }
            let quota =
                quota_positions.map_or_else(|| "no daily quota".to_string(), |q| format!("{q} positions a day"));
            kibitz::errln!(
                "key `{name}` made: {rate} units/s, burst {burst}, {quota}. It is shown only now: keep it; send it \
                 as `Authorization: Bearer <key>`"
            );
        }
        KeysCommand::List { .. } => {
            let keys = store.keys().await?;
            if keys.is_empty() {
                outln!("no keys (make one with `kibitz keys create --name NAME`)");
                return Ok(());
            }
            outln!("{:<24} {:>10} {:>8} {:>14}  {:<20}  status", "name", "rate/s", "burst", "quota/day", "created");
            for key in keys {
                let quota = key.quota_positions.map_or_else(|| "-".to_string(), |q| q.to_string());
                let status = key.revoked_ms.map_or_else(|| "active".to_string(), |ms| format!("revoked {}", utc(ms)));
                outln!(
                    "{:<24} {:>10} {:>8} {:>14}  {:<20}  {status}",
                    key.name,
                    key.rate,
                    key.burst,
                    quota,
                    utc(key.created_ms)
                );
            }
        }
        KeysCommand::Revoke { name, .. } => {
            if store.revoke_key(&name).await? {
                outln!("key `{name}` revoked");
            } else if store.keys().await?.iter().any(|k| k.name == name) {
                bail!("the key `{name}` is already revoked");
            } else {
                bail!("no key named `{name}` (see `kibitz keys list`)");
            }
        }
    }
    Ok(())
}

/// Milliseconds since 1970 as `YYYY-MM-DD HH:MM:SS` UTC (the civil calendar from a day count).
fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(951_782_400_000 + 3_661_000), "2000-02-29 01:01:01");
        assert_eq!(super::utc(1_795_000_000_000), "2026-11-18 11:06:40");
    }
}
