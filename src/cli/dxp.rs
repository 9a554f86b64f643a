//! `kibitz dxp --listen ADDR | --connect HOST:PORT`: international draughts against another program over the
//! DamExchange Protocol ([`kibitz::protocols::dxp`]). The side that connects is the initiator (it proposes
//! the games); the side that listens is the follower.

use std::io::Write;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

use kibitz::game::Side;
use kibitz::protocols::dxp::{self, DxpConfig, Role};

#[derive(Args)]
pub struct DxpArgs {
    /// Listen on this address (`127.0.0.1:27531`; port 0 picks one) and follow the peer that connects.
    #[arg(long, conflicts_with = "connect", required_unless_present = "connect")]
    pub listen: Option<String>,
    /// Connect to a follower at HOST:PORT and propose the games.
    #[arg(long)]
    pub connect: Option<String>,
    /// Games the initiator proposes (colours change after each).
    #[arg(long, default_value_t = 1)]
    pub games: u32,
    /// The initiator's colour in the first game: white or black.
    #[arg(long, default_value = "white")]
    pub color: String,
    /// Minutes per side for the whole game (the initiator's proposal; DXP writes it in three digits).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=999))]
    pub minutes: u32,
    /// Moves in the whole game, over which the time is spread (0: no limit; at most 999).
    #[arg(long, default_value_t = 75, value_parser = clap::value_parser!(u32).range(0..=999))]
    pub moves: u32,
    /// The name sent to the peer.
    #[arg(long, default_value = "kibitz")]
    pub name: String,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Transposition table size in MiB (1 to 65536).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub hash: u32,
    /// Give up when the peer sends nothing for this many seconds (while it is to move or between games);
    /// the follower also waits this long for the connection.
    #[arg(long, default_value_t = 600)]
    pub idle_s: u64,
}

pub fn run(args: DxpArgs) -> Result<()> {
    let idle = Duration::from_secs(args.idle_s.max(1));
    let (stream, role) = if let Some(addr) = &args.listen {
        let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr} (--listen)"))?;
        let local = listener.local_addr()?;
        outln!("kibitz dxp listening on {local}");
        std::io::stdout().flush()?;
        listener.set_nonblocking(true)?;
        let deadline = std::time::Instant::now() + idle;
        let stream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if std::time::Instant::now() >= deadline {
                        bail!("no DXP peer connected within {} s", idle.as_secs());
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e).context("accepting the DXP peer"),
            }
        };
        stream.set_nonblocking(false)?;
        (stream, Role::Follower)
    } else {
        let target = args.connect.as_deref().unwrap_or_default();
        let addr = target
            .to_socket_addrs()
            .with_context(|| format!("bad address {target} (--connect)"))?
            .next()
            .with_context(|| format!("no address for {target}"))?;
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(30))
            .with_context(|| format!("cannot connect to {target}"))?;
        let first_side = match args.color.as_str() {
            "white" => Side::First,
            "black" => Side::Second,
            other => bail!("--color is white or black, not {other}"),
        };
        let role = Role::Initiator { games: args.games.max(1), first_side, minutes: args.minutes, moves: args.moves };
        (stream, role)
    };
    let config = DxpConfig { role, name: args.name, threads: args.threads, hash_mb: args.hash };
    let results = dxp::run_tcp(stream, config, idle)?;
    for line in &results {
        outln!("{line}");
    }
    outln!("kibitz dxp: {} games played", results.len());
    Ok(())
}
