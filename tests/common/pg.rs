//! A throwaway PostgreSQL cluster for tests: `initdb` into a temporary directory and `postgres` (through
//! `pg_ctl`) on a free loopback port, as a user other than root when the tests run as root (PostgreSQL
//! refuses root). Stopped and removed on drop; a watchdog process also stops it if the test process dies
//! without dropping it (a static shared cluster, an abort).
//!
//! When PostgreSQL's programs are not installed, [`Cluster::start`] prints why and returns `None` (the test
//! then returns without running), unless `KIBITZ_ORACLE=1`: then a missing PostgreSQL is a failure.
//! The programs are looked for in `KIBITZ_PG_BIN`, Debian's `/usr/lib/postgresql/<version>/bin` (newest
//! first), then `PATH`.
//!
//! Used by the store's unit tests (through `#[path]`) and the server tests, so it needs only std.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A running throwaway cluster. Its superuser is `kibitz`, trusted on loopback without a password.
pub struct Cluster {
    root: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The user the server runs as (uid, gid), when the tests run as root.
    user: Option<(u32, u32)>,
}

/// How long starting or stopping may take on a loaded machine.
const WAIT: Duration = Duration::from_secs(60);

fn oracle() -> bool {
    std::env::var("KIBITZ_ORACLE").is_ok_and(|v| v == "1")
}

/// Why the tests cannot run here: printed, or a failure under `KIBITZ_ORACLE=1`.
fn unavailable(why: &str) -> Option<Cluster> {
    assert!(!oracle(), "KIBITZ_ORACLE=1 but PostgreSQL cannot be started: {why}");
    eprintln!("skipped: PostgreSQL tests did not run: {why} (install Debian's `postgresql` to run them)");
    None
}

/// The directory holding `initdb`, `pg_ctl` and `postgres`.
fn find_bin() -> Option<PathBuf> {
    let has_all = |dir: &Path| ["initdb", "pg_ctl", "postgres", "psql"].iter().all(|p| dir.join(p).is_file());
    if let Some(dir) = std::env::var_os("KIBITZ_PG_BIN").map(PathBuf::from) {
        return has_all(&dir).then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    if let Some((_, dir)) = versions.into_iter().find(|(_, dir)| has_all(dir)) {
        return Some(dir);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|dir| has_all(dir))
}

/// (uid, gid) of `name` in /etc/passwd.
fn passwd_ids(name: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() > 3 && fields[0] == name).then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))?
    })
}

fn current_uid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn free_port() -> Option<u16> {
    TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok().map(|a| a.port())
}

impl Cluster {
    /// A fresh cluster, or `None` (printed why) when PostgreSQL is not installed here.
    pub fn start() -> Option<Cluster> {
        let Some(bin) = find_bin() else {
            return unavailable(
                "initdb, pg_ctl, postgres and psql were not found (KIBITZ_PG_BIN, /usr/lib/postgresql/*/bin, PATH)",
            );
        };
        let user = match current_uid() {
            Some(0) => match passwd_ids("postgres").or_else(|| passwd_ids("nobody")) {
                Some(ids) => Some(ids),
                None => return unavailable("running as root and there is no `postgres` or `nobody` user to run as"),
            },
            _ => None,
        };
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let root = std::env::temp_dir().join(format!(
            "kibitz-pg-{}-{nanos}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&root).expect("cluster directory");
        let port = free_port().expect("a free port");
        let cluster = Cluster { root, bin, port, user };
        cluster.own(&cluster.root);
        let out = cluster
            .command("initdb")
            .arg("-D")
            .arg(cluster.data())
            .args(["-A", "trust", "-U", "kibitz", "-E", "UTF8", "--no-sync", "--no-instructions"])
            .output()
            .expect("run initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        cluster.start_server();
        cluster.watchdog();
        Some(cluster)
    }

    /// One cluster for the whole test process (never dropped: its watchdog stops it when the process ends).
    pub fn shared() -> Option<&'static Cluster> {
        static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
        SHARED.get_or_init(Cluster::start).as_ref()
    }

    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    fn own(&self, path: &Path) {
        #[cfg(unix)]
        if let Some((uid, gid)) = self.user {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("give the cluster directory away");
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        command.stdin(Stdio::null()).env("LC_ALL", "C").env_remove("PGDATA");
        #[cfg(unix)]
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            command.uid(uid).gid(gid).env("HOME", &self.root);
        }
        command
    }

    /// Start the server on its port (again, after [`Cluster::stop_server`]) and wait until it accepts.
    pub fn start_server(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200",
            self.port,
            self.root.display()
        );
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.root.join("log"))
            .args(["-w", "-t", "60", "-o", &options, "start"])
            .stdout(Stdio::null())
            .output()
            .expect("run pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.root.join("log")).unwrap_or_default()
        );
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "PostgreSQL did not accept connections");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stop the server at once (connections are cut, as when the database machine goes away).
    pub fn stop_server(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "-t", "60", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// A process that stops the cluster when this test process is gone (it runs as the cluster's user, which
    /// may not signal the test process: /proc tells whether it lives).
    fn watchdog(&self) {
        let script = format!(
            "while [ -d /proc/{pid} ] || kill -0 {pid} 2>/dev/null; do sleep 1; done; {ctl} -D {data} -m immediate stop >/dev/null 2>&1; \
             rm -rf {root}",
            pid = std::process::id(),
            ctl = self.bin.join("pg_ctl").display(),
            data = self.data().display(),
            root = self.root.display(),
        );
        let mut command = Command::new("sh");
        command.args(["-c", &script]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        #[cfg(unix)]
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            command.uid(uid).gid(gid);
        }
        let _ = command.spawn();
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` of this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://kibitz@127.0.0.1:{}/{name}", self.port)
    }

    /// A new empty database; its URL.
    pub fn database(&self) -> String {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let name = format!("t{}_{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "kibitz", "-d", "postgres", "-qAtc"])
            .arg(format!("CREATE DATABASE {name}"))
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(out.status.success(), "CREATE DATABASE failed: {}", String::from_utf8_lossy(&out.stderr));
        self.url(&name)
    }

    /// Run SQL on database `url` with psql; its unaligned output.
    pub fn psql(&self, url: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([url, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        assert!(out.status.success(), "psql failed on {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop_server();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
