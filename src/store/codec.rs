//! How a [`CachedAnalysis`] becomes a row and back, the same for every backend: unsigned numbers become
//! non-negative 64-bit integers (saturating; SQL has no unsigned types), the lines become JSON text.

use super::{CachedAnalysis, CachedLine, StoreError};

/// The column values of one result, ready to bind.
pub(crate) struct Encoded<'a> {
    pub depth: i64,
    pub seldepth: i64,
    pub nodes: i64,
    pub time_ms: i64,
    pub bestmove: Option<&'a str>,
    pub lines: String,
}

/// The column values of one result as read back, before checking.
pub(crate) struct Raw {
    pub depth: i64,
    pub seldepth: i64,
    pub nodes: i64,
    pub time_ms: i64,
    pub bestmove: Option<String>,
    pub lines: String,
}

fn saturate(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn encode(value: &CachedAnalysis) -> Result<Encoded<'_>, StoreError> {
    Ok(Encoded {
        depth: i64::from(value.depth),
        seldepth: i64::from(value.seldepth),
        nodes: saturate(value.nodes),
        time_ms: saturate(value.time_ms),
        bestmove: value.bestmove.as_deref(),
        lines: serde_json::to_string(&value.lines).map_err(StoreError::Encode)?,
    })
}

/// The stored result, or what is wrong with the row.
pub(crate) fn decode(raw: Raw) -> Result<CachedAnalysis, String> {
    fn unsigned<T: TryFrom<i64>>(name: &str, value: i64) -> Result<T, String> {
        T::try_from(value).map_err(|_| format!("{name} {value} is out of range"))
    }
    let lines: Vec<CachedLine> =
        serde_json::from_str(&raw.lines).map_err(|error| format!("lines are not valid JSON lines: {error}"))?;
    Ok(CachedAnalysis {
        depth: unsigned("depth", raw.depth)?,
        seldepth: unsigned("seldepth", raw.seldepth)?,
        nodes: unsigned("nodes", raw.nodes)?,
        time_ms: unsigned("time_ms", raw.time_ms)?,
        bestmove: raw.bestmove,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::{Raw, decode, encode};
    use crate::store::{CachedAnalysis, CachedLine, CachedScore};

    fn sample() -> CachedAnalysis {
        CachedAnalysis {
            depth: 14,
            seldepth: 22,
            nodes: 123_456,
            time_ms: 250,
            bestmove: Some("a-b".into()),
            lines: vec![
                CachedLine { moves: vec!["a-b".into(), "c-d".into()], score: CachedScore::Cp(-35), depth: 14 },
                CachedLine { moves: vec!["e-f".into()], score: CachedScore::Mate(-7), depth: 13 },
            ],
        }
    }

    fn raw_of(value: &CachedAnalysis) -> Raw {
        let encoded = encode(value).expect("encodes");
        Raw {
            depth: encoded.depth,
            seldepth: encoded.seldepth,
            nodes: encoded.nodes,
            time_ms: encoded.time_ms,
            bestmove: encoded.bestmove.map(str::to_string),
            lines: encoded.lines,
        }
    }

    #[test]
    fn round_trip() {
        let value = sample();
        assert_eq!(decode(raw_of(&value)), Ok(value));
    }

    #[test]
    fn lines_are_json_with_lowercase_scores() {
        let value = sample();
        let encoded = encode(&value).expect("encodes");
        assert_eq!(
            encoded.lines,
            r#"[{"moves":["a-b","c-d"],"score":{"cp":-35},"depth":14},{"moves":["e-f"],"score":{"mate":-7},"depth":13}]"#
        );
    }

    #[test]
    fn huge_counters_saturate() {
        let mut value = sample();
        value.nodes = u64::MAX;
        let raw = raw_of(&value);
        assert_eq!(raw.nodes, i64::MAX);
        assert_eq!(decode(raw).map(|v| v.nodes), Ok(i64::MAX as u64));
    }

    #[test]
    fn bad_rows_are_described_not_panicked_on() {
        let mut raw = raw_of(&sample());
        raw.lines = "{not json".into();
        assert!(decode(raw).unwrap_err().contains("lines"));
        let mut raw = raw_of(&sample());
        raw.lines = r#"[{"moves":[],"score":{"eval":3},"depth":1}]"#.into();
        assert!(decode(raw).is_err());
        let mut raw = raw_of(&sample());
        raw.depth = -1;
        assert!(decode(raw).unwrap_err().contains("depth"));
        let mut raw = raw_of(&sample());
        raw.depth = i64::from(u32::MAX) + 1;
        assert!(decode(raw).is_err());
    }
}
