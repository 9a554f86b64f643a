//! The two sides of a match: kibitz's own search, or an external engine from the engines file. A
//! [`PlayerSpec`] says which (and is shared by every game); each game thread makes its own [`Player`] from it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::engines::{Driver, EnginePool, ExternalEngine};
use crate::game::Game;
use crate::search::{self, Limits, SearchOptions, TranspositionTable};

/// The most threads and hash a `kibitz:` player may ask for.
const MAX_THREADS: usize = 256;
const MAX_HASH_MB: usize = 1 << 16;

/// How long a game waits for a process of an external engine (every process may be busy in other games).
const CHECKOUT_WAIT: Duration = Duration::from_secs(120);

/// kibitz's own search with its settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KibitzSettings {
    pub threads: usize,
    pub hash_mb: usize,
}

impl Default for KibitzSettings {
    fn default() -> Self {
        KibitzSettings { threads: 1, hash_mb: 64 }
    }
}

impl KibitzSettings {
    /// Read `kibitz` or `kibitz:threads=1,hash=64`; `None` when `text` names something else (an engine).
    pub fn parse(text: &str) -> Option<Result<KibitzSettings, String>> {
        let (head, rest) = match text.split_once(':') {
            Some((h, r)) => (h, Some(r)),
            None => (text, None),
        };
        if !head.eq_ignore_ascii_case("kibitz") {
            return None;
        }
        let mut settings = KibitzSettings::default();
        for item in rest.unwrap_or("").split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Some(Err(format!("`{item}`: kibitz settings are key=value (threads, hash)")));
            };
            let number = value.trim().parse::<usize>().ok();
            match (key.trim().to_ascii_lowercase().as_str(), number) {
                ("threads", Some(n)) if (1..=MAX_THREADS).contains(&n) => settings.threads = n,
                ("hash", Some(n)) if (1..=MAX_HASH_MB).contains(&n) => settings.hash_mb = n,
                ("threads", _) => return Some(Err(format!("`{item}`: threads is 1 to {MAX_THREADS}"))),
                ("hash", _) => return Some(Err(format!("`{item}`: hash is 1 to {MAX_HASH_MB} MiB"))),
                _ => return Some(Err(format!("`{item}`: unknown kibitz setting (known: threads, hash)"))),
            }
        }
        Some(Ok(settings))
    }
}

/// Who plays one side of a match.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    Kibitz(KibitzSettings),
    External(Arc<ExternalEngine>),
}

impl PlayerSpec {
    /// A player for one game thread of game `G`. An external engine must have a pool for `G`.
    pub fn player<G: Game>(&self) -> Result<Box<dyn Player<G>>, String> {
        match self {
            PlayerSpec::Kibitz(settings) => Ok(Box::new(KibitzPlayer::<G>::new(settings.clone()))),
            PlayerSpec::External(engine) => {
                let pool =
                    engine.pool::<G>().ok_or_else(|| format!("engine `{}` does not play {}", engine.name, G::NAME))?;
                Ok(Box::new(ExternalPlayer { name: engine.name.clone(), pool: Arc::clone(pool), driver: None }))
            }
        }
    }
}

/// One side of the games of one game thread.
pub trait Player<G: Game>: Send {
    /// Get ready for a new game (clear tables, take an engine process and tell it a new game starts).
    fn start_game(&mut self) -> Result<(), String>;

    /// The move to play in `now`, the position `root` reaches after `moves` (the game so far). An error is the
    /// player's failure, in words naming it.
    fn choose(
        &mut self,
        root: &G,
        moves: &[G::Move],
        now: &G,
        limits: &Limits,
        stop: &Arc<AtomicBool>,
    ) -> Result<G::Move, String>;

    /// The game is over (an engine process goes back to its pool).
    fn end_game(&mut self);
}

/// kibitz's own search, on this thread, with a transposition table of its own.
struct KibitzPlayer<G: Game> {
    settings: KibitzSettings,
    tt: Option<Arc<TranspositionTable>>,
    _game: std::marker::PhantomData<fn() -> G>,
}

impl<G: Game> KibitzPlayer<G> {
    fn new(settings: KibitzSettings) -> Self {
        KibitzPlayer { settings, tt: None, _game: std::marker::PhantomData }
    }
}

impl<G: Game> Player<G> for KibitzPlayer<G> {
    fn start_game(&mut self) -> Result<(), String> {
        match &self.tt {
            Some(tt) => tt.clear(),
            None => self.tt = Some(Arc::new(TranspositionTable::new(self.settings.hash_mb))),
        }
        Ok(())
    }

    fn choose(
        &mut self,
        _root: &G,
        _moves: &[G::Move],
        now: &G,
        limits: &Limits,
        stop: &Arc<AtomicBool>,
    ) -> Result<G::Move, String> {
        let tt = Arc::clone(self.tt.get_or_insert_with(|| Arc::new(TranspositionTable::new(self.settings.hash_mb))));
        let options = SearchOptions { threads: self.settings.threads, ..SearchOptions::default() };
        let done = search::search(now, limits, &options, &tt, stop, &mut |_| {});
        done.best.ok_or_else(|| "kibitz found no move".to_string())
    }

    fn end_game(&mut self) {}
}

/// An external engine: one of its processes is held for the whole game.
struct ExternalPlayer<G: Game> {
    name: String,
    pool: Arc<EnginePool<G>>,
    driver: Option<Box<dyn Driver<G>>>,
}

impl<G: Game> Player<G> for ExternalPlayer<G> {
    fn start_game(&mut self) -> Result<(), String> {
        self.end_game();
        let mut driver = self.pool.checkout(CHECKOUT_WAIT).map_err(|e| e.to_string())?;
        let ready = driver.new_game();
        self.driver = Some(driver);
        ready.map_err(|e| e.to_string())
    }

    fn choose(
        &mut self,
        root: &G,
        moves: &[G::Move],
        _now: &G,
        limits: &Limits,
        stop: &Arc<AtomicBool>,
    ) -> Result<G::Move, String> {
        let Some(driver) = self.driver.as_mut() else {
            return Err(format!("engine `{}` has no process", self.name));
        };
        let done = driver.search(root, moves, limits, 1, stop, &mut |_| {}).map_err(|e| e.to_string())?;
        done.best.ok_or_else(|| format!("engine `{}` answered no move", self.name))
    }

    fn end_game(&mut self) {
        if let Some(driver) = self.driver.take() {
            self.pool.give_back(driver);
        }
    }
}

impl<G: Game> Drop for ExternalPlayer<G> {
    fn drop(&mut self) {
        self.end_game();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kibitz_settings_are_read_and_checked() {
        assert_eq!(KibitzSettings::parse("kibitz"), Some(Ok(KibitzSettings::default())));
        assert_eq!(
            KibitzSettings::parse("Kibitz:threads=2, hash=16"),
            Some(Ok(KibitzSettings { threads: 2, hash_mb: 16 }))
        );
        assert!(KibitzSettings::parse("stockfish").is_none());
        assert!(KibitzSettings::parse("kibitz:threads=0").unwrap().unwrap_err().contains("threads is 1"));
        assert!(KibitzSettings::parse("kibitz:depth=3").unwrap().unwrap_err().contains("unknown kibitz setting"));
        assert!(KibitzSettings::parse("kibitz:threads").unwrap().unwrap_err().contains("key=value"));
    }
}
