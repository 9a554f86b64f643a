//! Training a small network evaluation on self-play positions ([`selfplay`](super::selfplay)'s
//! `POSITION;result;score` lines): sparse inputs into one hidden layer per side (the side to move's and the
//! other's, the same weights), squared clipped ReLU, one output. The output, in units of the logistic's
//! argument, predicts `lambda · result + (1 - lambda) · sigmoid(K · score)` through a sigmoid, where K is the
//! scale at which the game's hand-written evaluation best predicts the results; an output unit is then worth
//! 1 / K of the game's centi-units, so the network's scores keep the scale the search's margins were set for.
//!
//! With `residual`, the network learns a correction added to the hand-written evaluation instead of the
//! whole evaluation.
//!
//! Adam on mini-batches, every tenth block of 1,000 positions held out (whole games, as in [`super::fit`]);
//! the weights of the epoch with the lowest held-out error are kept. The weights are clipped to what the
//! engine's quantization can hold, and where the game names its fixed point ([`NetTrainable::NET_FIXED_POINT`])
//! every output and gradient is computed through the weights rounded to it (quantization-aware training,
//! the rounding passed over as if it were not there on the way back): each error the training reports, and the
//! network it keeps, is then the one the engine computes, not a float network's that rounding makes worse (but
//! for a factorised first layer, whose blocks are rounded only once summed, when the file is written).

use super::Tunable;
use super::fit::sigmoid;
use crate::game::Side;
use crate::matchplay::Rng;

/// A game whose evaluation can be a network trained here.
pub trait NetTrainable: Tunable {
    /// How many inputs the network has.
    const NET_INPUTS: usize;

    /// The fixed point the engine stores a network in: a float weight `w` is stored as `round(w · scale)`,
    /// with one scale for the first layer's weights and biases, one for the output weights and one for the
    /// output biases. `None` (the default): the network is used in floating point.
    const NET_FIXED_POINT: Option<[f32; 3]> = None;

    /// The inputs that are on in this position, seen from the first side (White); false to leave the
    /// position out.
    fn net_features(&self, out: &mut Vec<u16>) -> bool;

    /// An input seen from the first side, as the second side sees it.
    fn net_mirror(feature: u16) -> u16;

    /// How many regions a side's own king may stand in, each with its own first-layer weights where the
    /// training asks for them ([`Options::kings`]); 1 (the default) where the game has none.
    const NET_KING_BUCKETS: usize = 1;

    /// The king region of the side whose inputs `view` are (as [`net_features`](Self::net_features) gives
    /// them for the first side, and [`net_mirror`](Self::net_mirror) for the second).
    fn net_king_bucket(_view: &[u16]) -> usize {
        0
    }

    /// The hand-written evaluation from the first side's view.
    fn hand_eval(&self) -> f32;

    /// Which of `buckets` output weight sets weighs a position with `inputs` inputs on (chess: one piece
    /// each, so the stage of the game).
    fn net_output_bucket(inputs: usize, buckets: usize) -> usize;

    /// A position the rules make equal to this one, to train on as well (chess: the board mirrored left to
    /// right where neither side may castle); `None` (the default) where there is none.
    fn net_mirrored(&self) -> Option<Self> {
        None
    }

    /// The position's ply in its game (from the game's start, as its notation records it), to tell where one
    /// self-play game ends and the next begins for [`Smoothing`]; `None` (the default) where the notation
    /// does not say.
    fn net_ply(&self) -> Option<u32> {
        None
    }
}

/// Scores smoothed along each self-play game before training (temporal-difference style): a position's score
/// becomes the mean of the scores of the positions of its game from it to `plies` plies later, the one `d`
/// plies later weighing `lambda^d`, rounded to whole centi-units as the files' scores are. Each of those
/// scores is a search from further along the line played, so the mean looks deeper than the one search of the
/// position; the game's result stays a separate part of the target (`Options::lambda`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smoothing {
    pub lambda: f64,
    pub plies: u32,
}

impl Smoothing {
    /// The smoothed scores of one game's positions, given as (ply, score) in the order played.
    pub fn apply(&self, game: &[(u32, f32)]) -> Vec<f32> {
        (0..game.len())
            .map(|i| {
                let (p0, mut sum, mut weight) = (game[i].0, 0.0f64, 0.0f64);
                for &(p, s) in game[i..].iter().take_while(|(p, _)| p - p0 < self.plies) {
                    let w = self.lambda.powf(f64::from(p - p0));
                    sum += w * f64::from(s);
                    weight += w;
                }
                (sum / weight).round_ties_even() as f32
            })
            .collect()
    }
}

/// A network in floating point.
#[derive(Clone, Debug)]
pub struct FloatNet {
    pub inputs: usize,
    pub hidden: usize,
    /// `inputs × hidden`, input-major.
    pub w1: Vec<f32>,
    pub b1: Vec<f32>,
    /// `buckets × 2 × hidden`: per output bucket, the side to move's half, then the other's.
    pub w2: Vec<f32>,
    /// One per output bucket.
    pub b2: Vec<f32>,
}

/// The largest first-layer weight or bias (the engine's accumulators are 16-bit).
pub const W1_LIMIT: f32 = 1.98;
/// The largest output weight (the engine's output sum is 32-bit).
pub const W2_LIMIT: f32 = 1.98;

impl FloatNet {
    fn new(inputs: usize, hidden: usize, buckets: usize, rng: &mut Rng) -> FloatNet {
        let mut uniform = |scale: f32| (rng.unit() as f32 * 2.0 - 1.0) * scale;
        let w1 = (0..inputs * hidden).map(|_| uniform(0.1)).collect();
        let b1 = (0..hidden).map(|_| 0.1 + uniform(0.05)).collect();
        let w2 = (0..buckets * 2 * hidden).map(|_| uniform(0.1)).collect();
        FloatNet { inputs, hidden, w1, b1, w2, b2: vec![0.0; buckets] }
    }

    fn len(&self) -> usize {
        self.w1.len() + self.b1.len() + self.w2.len() + self.b2.len()
    }

    /// The output (logistic units) for features seen by the side to move (`own`) and the other side, weighed
    /// by output bucket `bucket`.
    fn forward(&self, own: &[u16], other: &[u16], bucket: usize, acc: &mut [f32]) -> f32 {
        let h = self.hidden;
        let (a0, a1) = acc.split_at_mut(h);
        for (view, a) in [(own, a0), (other, a1)] {
            a.copy_from_slice(&self.b1);
            for &f in view {
                let row = &self.w1[f as usize * h..][..h];
                for (x, w) in a.iter_mut().zip(row) {
                    *x += w;
                }
            }
        }
        let mut out = self.b2[bucket];
        for (x, w) in acc.iter().zip(&self.w2[bucket * 2 * h..][..2 * h]) {
            let c = x.clamp(0.0, 1.0);
            out += c * c * w;
        }
        out
    }
}

struct Samples {
    features: Vec<u16>,
    start: Vec<u32>,
    /// The side to move is the first side.
    first_to_move: Vec<bool>,
    result: Vec<f32>,
    score: Vec<f32>,
    hand: Vec<f32>,
}

impl Samples {
    fn new() -> Samples {
        Samples {
            features: Vec::new(),
            start: vec![0],
            first_to_move: Vec::new(),
            result: Vec::new(),
            score: Vec::new(),
            hand: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.result.len()
    }

    fn push<G: NetTrainable>(&mut self, game: &G, features: &[u16], result: f32, score: f32) {
        self.features.extend_from_slice(features);
        self.start.push(self.features.len() as u32);
        self.first_to_move.push(game.side_to_move() == Side::First);
        self.result.push(result);
        self.score.push(score);
        self.hand.push(game.hand_eval());
    }

    fn features(&self, i: usize) -> &[u16] {
        &self.features[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// The training's settings.
#[derive(Clone, Debug)]
pub struct Options {
    pub hidden: usize,
    pub epochs: usize,
    pub lambda: f32,
    pub batch: usize,
    pub rate: f32,
    /// The network corrects the hand-written evaluation.
    pub residual: bool,
    pub threads: usize,
    pub seed: u64,
    /// Train on [`NetTrainable::net_mirrored`]'s positions too (never held out).
    pub mirror: bool,
    /// Output buckets ([`NetTrainable::net_output_bucket`]); 1 for one output for every position.
    pub buckets: usize,
    /// A set of first-layer weights for each king region ([`NetTrainable::net_king_bucket`]): the network has
    /// `NET_INPUTS · NET_KING_BUCKETS` inputs, a side's inputs those of its own king's region.
    pub kings: bool,
    /// With `kings`: each piece also counts as an input of a block shared by every region, which the written
    /// network folds into each region's weights. The shared block learns from every position; a region's own
    /// weights start at zero and learn only what its positions add (a factorised first layer, so that the
    /// regions need not learn the common part from their share of the positions each).
    pub factorise: bool,
    /// A network to start from instead of random weights (of the same inputs and buckets, and at most
    /// `hidden` hidden values: see [`start_from`]), with its centi-units per output unit; its output layer is
    /// rescaled to this data's K, so that it starts out predicting the centi-units it did.
    pub init: Option<(FloatNet, f32)>,
    /// Smooth each game's scores before training ([`Smoothing`]); `None` trains on the scores as written.
    pub smooth: Option<Smoothing>,
    /// The K of the targets (positive), in place of the starting network's (or, from random weights, the one
    /// fitted to the data): runs whose K differs have different targets, so their errors compare only at one K.
    /// A starting network of another K is rescaled to it and rounded to the fixed point again, so its first
    /// reported error is its rounded copy's.
    pub k: Option<f32>,
}

/// What the training learned.
pub struct Trained {
    pub net: FloatNet,
    /// Centi-units per output unit (1 / K).
    pub scale: f32,
    /// The epoch whose weights are kept; 0 where the training started from a network and no epoch improved on it.
    pub best_epoch: usize,
    pub best_error: f64,
    /// The held-out error of the hand-written evaluation alone, at K.
    pub hand_error: f64,
}

/// Read the positions of `paths` into training and held-out sets (as [`super::fit::load`] splits them); how
/// many were left out. With `smooth`, the positions of each game (consecutive lines of one result whose plies
/// rise) are gathered first and their scores smoothed.
fn load<G: NetTrainable>(
    paths: &[String],
    mirror: bool,
    smooth: Option<Smoothing>,
) -> Result<(Samples, Samples, usize), String> {
    let (mut train, mut valid, mut skipped) = (Samples::new(), Samples::new(), 0usize);
    let mut features = Vec::new();
    let mut split = super::fit::HeldOut::default();
    let mut add = |game: G, result: f32, score: f32| {
        if !game.net_features(&mut features) {
            skipped += 1;
            return;
        }
        let held_out = split.next_is_held_out();
        let s = if held_out { &mut valid } else { &mut train };
        s.push(&game, &features, result, score);
        if mirror
            && !held_out
            && let Some(m) = game.net_mirrored()
            && m.net_features(&mut features)
        {
            s.push(&m, &features, result, score);
        }
    };
    let Some(smooth) = smooth else {
        super::fit::read_positions::<G>(paths, &mut add)?;
        return Ok((train, valid, skipped));
    };
    // One game's positions: the position, its result, its ply and its score.
    let mut game: Vec<(G, f32, u32, f32)> = Vec::new();
    let mut flush = |game: &mut Vec<(G, f32, u32, f32)>| {
        let scores = smooth.apply(&game.iter().map(|&(_, _, p, s)| (p, s)).collect::<Vec<_>>());
        for ((position, result, _, _), score) in game.drain(..).zip(scores) {
            add(position, result, score);
        }
    };
    let mut unnumbered = false;
    super::fit::read_positions::<G>(paths, &mut |position, result, score| {
        let Some(ply) = position.net_ply() else {
            unnumbered = true;
            return;
        };
        if game.last().is_some_and(|&(_, r, p, _)| r != result || p >= ply) {
            flush(&mut game);
        }
        game.push((position, result, ply, score));
    })?;
    if unnumbered {
        return Err("smoothing needs each position's ply, and this game's positions do not give it".into());
    }
    flush(&mut game);
    Ok((train, valid, skipped))
}

/// The K at which the hand-written evaluation best predicts the results.
fn fit_k(data: &Samples) -> f32 {
    let error = |k: f32| -> f64 {
        (0..data.len()).map(|i| f64::from(data.result[i] - sigmoid(k * data.hand[i])).powi(2)).sum::<f64>()
    };
    let mut best = (f64::INFINITY, 0.0f32);
    let mut k = 0.0005f32;
    while k <= 0.05 {
        let e = error(k);
        if e < best.0 {
            best = (e, k);
        }
        k *= 1.02;
    }
    best.1
}

/// Sample `i`'s target and the hand-written part of its output, both from the side to move's view.
#[inline]
fn target(s: &Samples, i: usize, k: f32, lambda: f32, residual: bool) -> (f32, f32) {
    let t = lambda * s.result[i] + (1.0 - lambda) * sigmoid(k * s.score[i]);
    let base = if residual { k * s.hand[i] } else { 0.0 };
    if s.first_to_move[i] { (t, base) } else { (1.0 - t, -base) }
}

/// The layout of the first layer's inputs in training: with `kings`, a block of `NET_INPUTS` per king region,
/// and with `factorise` (where the game has several regions) one more, shared, after them.
fn blocks<G: NetTrainable>(o: &Options) -> usize {
    match (o.kings, o.factorise) {
        (false, _) => 1,
        (true, true) if G::NET_KING_BUCKETS > 1 => G::NET_KING_BUCKETS + 1,
        (true, _) => G::NET_KING_BUCKETS,
    }
}

/// Both views of sample `i`, the first side's then the second's, each of the same length (each moved to its
/// king's region with `kings`, each piece there and in the shared block with `factorise`): the length of a
/// view, how many pieces the position has, and whether the first side is to move.
fn views<G: NetTrainable>(s: &Samples, i: usize, o: &Options, buf: &mut Vec<u16>) -> (usize, usize, bool) {
    let f = s.features(i);
    let n = f.len();
    let factorised = blocks::<G>(o) > G::NET_KING_BUCKETS;
    buf.clear();
    for side in 0..2 {
        let start = buf.len();
        if side == 0 {
            buf.extend_from_slice(f);
        } else {
            buf.extend(f.iter().map(|&x| G::net_mirror(x)));
        }
        if o.kings {
            let region = (G::net_king_bucket(&buf[start..]) * G::NET_INPUTS) as u16;
            if factorised {
                let shared = (G::NET_KING_BUCKETS * G::NET_INPUTS) as u16;
                for j in start..start + n {
                    let x = buf[j];
                    buf.push(x + shared);
                }
            }
            buf[start..start + n].iter_mut().for_each(|x| *x += region);
        }
    }
    (buf.len() / 2, n, s.first_to_move[i])
}

/// `net` as the engine reads it: a factorised first layer's shared block added to each region's weights
/// (within what the engine's quantization holds), and dropped.
fn folded(net: &FloatNet, inputs: usize, regions: usize) -> FloatNet {
    if net.inputs != inputs * (regions + 1) || regions < 2 {
        return net.clone();
    }
    let h = net.hidden;
    let (own, shared) = net.w1.split_at(inputs * regions * h);
    let w1 = own.iter().enumerate().map(|(i, w)| (w + shared[i % (inputs * h)]).clamp(-W1_LIMIT, W1_LIMIT)).collect();
    FloatNet { inputs: inputs * regions, w1, ..net.clone() }
}

/// `net` as the engine computes it, into `out`: each weight rounded to the game's fixed point
/// ([`NetTrainable::NET_FIXED_POINT`]; a copy where it has none). A factorised first layer keeps its float
/// weights: the engine stores the sums of its blocks, which a block's own rounding would not give.
fn rounded<G: NetTrainable>(net: &FloatNet, o: &Options, out: &mut FloatNet) {
    out.clone_from(net);
    let Some([first, output, bias]) = G::NET_FIXED_POINT else {
        return;
    };
    let round = |w: &mut f32, scale: f32| *w = (*w * scale).round() / scale;
    if blocks::<G>(o) <= G::NET_KING_BUCKETS {
        out.w1.iter_mut().for_each(|w| round(w, first));
    }
    out.b1.iter_mut().for_each(|w| round(w, first));
    out.w2.iter_mut().for_each(|w| round(w, output));
    out.b2.iter_mut().for_each(|w| round(w, bias));
}

fn error<G: NetTrainable>(net: &FloatNet, s: &Samples, k: f32, o: &Options) -> f64 {
    let mut acc = vec![0.0; 2 * net.hidden];
    let mut buf = Vec::new();
    let mut sum = 0.0f64;
    for i in 0..s.len() {
        let (n, pieces, first) = views::<G>(s, i, o, &mut buf);
        let (white, black) = buf.split_at(n);
        let (own, other) = if first { (white, black) } else { (black, white) };
        let (t, base) = target(s, i, k, o.lambda, o.residual);
        let bucket = G::net_output_bucket(pieces, net.b2.len());
        let p = sigmoid(net.forward(own, other, bucket, &mut acc) + base);
        sum += f64::from(p - t).powi(2);
    }
    sum / s.len().max(1) as f64
}

/// Gradients of the summed squared error over `batch` into `grad` (laid out as [`FloatNet`]: w1, b1, w2, b2).
fn gradients<G: NetTrainable>(net: &FloatNet, s: &Samples, batch: &[u32], k: f32, o: &Options, grad: &mut [f32]) {
    let h = net.hidden;
    let mut acc = vec![0.0; 2 * h];
    let mut dacc = vec![0.0; 2 * h];
    let mut buf = Vec::new();
    let (gw1, rest) = grad.split_at_mut(net.w1.len());
    let (gb1, rest) = rest.split_at_mut(h);
    let (gw2, gb2) = rest.split_at_mut(net.w2.len());
    for &i in batch {
        let i = i as usize;
        let (n, pieces, first) = views::<G>(s, i, o, &mut buf);
        let (white, black) = buf.split_at(n);
        let (own, other) = if first { (white, black) } else { (black, white) };
        let (t, base) = target(s, i, k, o.lambda, o.residual);
        let bucket = G::net_output_bucket(pieces, net.b2.len());
        let p = sigmoid(net.forward(own, other, bucket, &mut acc) + base);
        let g = 2.0 * (p - t) * p * (1.0 - p);
        gb2[bucket] += g;
        let (gw2, w2) = (&mut gw2[bucket * 2 * h..][..2 * h], &net.w2[bucket * 2 * h..][..2 * h]);
        for j in 0..2 * h {
            let x = acc[j];
            let c = x.clamp(0.0, 1.0);
            gw2[j] += g * c * c;
            dacc[j] = if x > 0.0 && x < 1.0 { g * w2[j] * 2.0 * x } else { 0.0 };
        }
        for (view, d) in [(own, &dacc[..h]), (other, &dacc[h..])] {
            for (b, x) in gb1.iter_mut().zip(d) {
                *b += x;
            }
            for &f in view {
                let row = &mut gw1[f as usize * h..][..h];
                for (w, x) in row.iter_mut().zip(d) {
                    *w += x;
                }
            }
        }
    }
}

/// `init` (whose output unit is `init_scale` centi-units) as the start of a training at `k`: the shape `o` asks
/// for, its output layer multiplied by `init_scale · k` so that its outputs keep their centi-units. A wider
/// hidden layer than `init`'s keeps `init`'s values first and adds new ones with random first-layer weights (as
/// a new network's) and output weights of zero: the widened network computes what `init` did, and the training
/// gives the new values their use. A network without king regions, where `o` asks for them, gives each region
/// its first layer (or, factorised, the shared block, the regions' own weights starting at zero); a network with
/// them, factorised, keeps its regions and starts the shared block at zero. Either way it computes what `init`
/// did, and each region then learns its own. `inputs` is the game's count without regions, `kings` the count of
/// regions.
fn start_from(
    init: &FloatNet,
    init_scale: f32,
    k: f32,
    (inputs, kings): (usize, usize),
    o: &Options,
    rng: &mut Rng,
) -> Result<FloatNet, String> {
    let buckets = o.buckets.max(1);
    let regions = if o.kings { kings } else { 1 };
    let factorised = o.kings && o.factorise && regions > 1;
    let blocks = regions + usize::from(factorised);
    let zeros = |n: usize| std::iter::repeat_n(0.0f32, n * init.hidden);
    let w1: Option<Vec<f32>> = if init.inputs == inputs * blocks {
        Some(init.w1.clone())
    } else if init.inputs == inputs && factorised {
        Some(zeros(inputs * regions).chain(init.w1.iter().copied()).collect())
    } else if init.inputs == inputs {
        Some(init.w1.repeat(regions))
    } else if init.inputs == inputs * regions && factorised {
        Some(init.w1.iter().copied().chain(zeros(inputs)).collect())
    } else {
        None
    };
    let Some(w1) = w1.filter(|_| init.hidden <= o.hidden && init.b2.len() == buckets) else {
        return Err(format!(
            "the network to start from has {} inputs, {} hidden values and {} output buckets; the training asks \
             for {}, {} (at least as many) and {buckets}",
            init.inputs,
            init.hidden,
            init.b2.len(),
            inputs * regions,
            o.hidden
        ));
    };
    let mut net = FloatNet { inputs: inputs * blocks, w1, ..init.clone() };
    let inputs = net.inputs;
    if o.hidden > init.hidden {
        let fresh = FloatNet::new(inputs, o.hidden - init.hidden, buckets, rng);
        let (old_h, new_h) = (init.hidden, fresh.hidden);
        net.hidden = o.hidden;
        let old_w1 = std::mem::take(&mut net.w1);
        net.w1 = (0..inputs)
            .flat_map(|f| old_w1[f * old_h..][..old_h].iter().chain(&fresh.w1[f * new_h..][..new_h]))
            .copied()
            .collect();
        net.b1 = init.b1.iter().chain(&fresh.b1).copied().collect();
        // Per bucket and per side: the old output weights, then zeros for the new values.
        net.w2 = init.w2.chunks(old_h).flat_map(|w| w.iter().copied().chain(std::iter::repeat_n(0.0, new_h))).collect();
    }
    let f = init_scale * k;
    net.w2.iter_mut().for_each(|w| *w = (*w * f).clamp(-W2_LIMIT, W2_LIMIT));
    net.b2.iter_mut().for_each(|b| *b *= f);
    Ok(net)
}

/// Train a network on the positions of `paths`; `report` hears each epoch's training and held-out error.
pub fn train<G: NetTrainable>(
    paths: &[String],
    o: &Options,
    report: &mut dyn FnMut(String),
) -> Result<Trained, String> {
    if let Some(k) = o.k
        && !(k.is_finite() && k > 0.0)
    {
        return Err(format!("K {k}: the targets' K must be a positive number"));
    }
    let (train, valid, skipped) = load::<G>(paths, o.mirror, o.smooth)?;
    if train.len() == 0 || valid.len() == 0 {
        return Err(format!(
            "{} training and {} held-out positions: too few to train on (10,000 at least)",
            train.len(),
            valid.len()
        ));
    }
    // A network to start from keeps its scale, so that it starts on the engine's fixed point as its file has
    // it (a rescaled output layer would round otherwise) and computes exactly what it did; unless a K is given.
    let k = match (&o.init, o.k) {
        (_, Some(k)) => k,
        (Some((_, init_scale)), None) if G::NET_FIXED_POINT.is_some() => 1.0 / init_scale,
        _ => fit_k(&train),
    };
    let mut rng = Rng(o.seed);
    let mut net = match &o.init {
        Some((init, init_scale)) => {
            start_from(init, *init_scale, k, (G::NET_INPUTS, G::NET_KING_BUCKETS), o, &mut rng)?
        }
        None => {
            let inputs = G::NET_INPUTS * blocks::<G>(o);
            let mut net = FloatNet::new(inputs, o.hidden, o.buckets.max(1), &mut rng);
            if blocks::<G>(o) > G::NET_KING_BUCKETS {
                // Factorised: the regions' own weights start at zero, the shared block random.
                net.w1[..G::NET_INPUTS * G::NET_KING_BUCKETS * o.hidden].fill(0.0);
            }
            if o.residual {
                net.w2.iter_mut().for_each(|w| *w = 0.0);
            }
            net
        }
    };
    let hand_error = {
        let mut zero = net.clone();
        zero.w2.iter_mut().for_each(|w| *w = 0.0);
        error::<G>(&zero, &valid, k, &Options { residual: true, ..o.clone() })
    };
    report(format!(
        "{} training and {} held-out positions, {skipped} left out; K = {k:.6}; the hand-written evaluation's \
         held-out error {hand_error:.6}",
        train.len(),
        valid.len()
    ));
    let n = net.len();
    let (mut m, mut v) = (vec![0.0f32; n], vec![0.0f32; n]);
    let (beta1, beta2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let mut step = 0i32;
    let mut order: Vec<u32> = (0..train.len() as u32).collect();
    // A network trained further is kept only where an epoch improves on where it started (epoch 0).
    let mut best = (f64::INFINITY, 0usize, net.clone());
    // The weights as the engine computes them: every output and gradient goes through these.
    let mut fixed = net.clone();
    if o.init.is_some() {
        rounded::<G>(&net, o, &mut fixed);
        let start = error::<G>(&fixed, &valid, k, o);
        report(format!("the starting network's held-out error {start:.6}"));
        best = (start, 0, fixed.clone());
    }
    let threads = o.threads.max(1);
    let mut grads = vec![vec![0.0f32; n]; threads];
    for epoch in 1..=o.epochs {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        // The rate falls to a tenth over the last quarter of the epochs.
        let rate = if epoch * 4 > o.epochs * 3 { o.rate * 0.1 } else { o.rate };
        for batch in order.chunks(o.batch.max(1)) {
            let per = batch.len().div_ceil(threads);
            rounded::<G>(&net, o, &mut fixed);
            std::thread::scope(|scope| {
                for (g, part) in grads.iter_mut().zip(batch.chunks(per)) {
                    let (net, train) = (&fixed, &train);
                    scope.spawn(move || {
                        g.iter_mut().for_each(|x| *x = 0.0);
                        gradients::<G>(net, train, part, k, o, g);
                    });
                }
            });
            step += 1;
            let scale = 1.0 / batch.len() as f32;
            let (c1, c2) = (1.0 - beta1.powi(step), 1.0 - beta2.powi(step));
            let (w1_len, b1_len, w2_len) = (net.w1.len(), net.b1.len(), net.w2.len());
            for idx in 0..n {
                let g: f32 = grads.iter().map(|g| g[idx]).sum::<f32>() * scale;
                m[idx] = beta1 * m[idx] + (1.0 - beta1) * g;
                v[idx] = beta2 * v[idx] + (1.0 - beta2) * g * g;
                let delta = rate * (m[idx] / c1) / ((v[idx] / c2).sqrt() + eps);
                if idx < w1_len {
                    net.w1[idx] = (net.w1[idx] - delta).clamp(-W1_LIMIT, W1_LIMIT);
                } else if idx < w1_len + b1_len {
                    let j = idx - w1_len;
                    net.b1[j] = (net.b1[j] - delta).clamp(-W1_LIMIT, W1_LIMIT);
                } else if idx < w1_len + b1_len + w2_len {
                    let j = idx - w1_len - b1_len;
                    net.w2[j] = (net.w2[j] - delta).clamp(-W2_LIMIT, W2_LIMIT);
                } else {
                    net.b2[idx - w1_len - b1_len - w2_len] -= delta;
                }
            }
        }
        rounded::<G>(&net, o, &mut fixed);
        let (te, ve) = (error::<G>(&fixed, &train, k, o), error::<G>(&fixed, &valid, k, o));
        report(format!("epoch {epoch}: training error {te:.6}, held-out error {ve:.6}"));
        if ve < best.0 {
            best = (ve, epoch, fixed.clone());
        }
    }
    let net = if o.kings { folded(&best.2, G::NET_INPUTS, G::NET_KING_BUCKETS) } else { best.2 };
    Ok(Trained { net, scale: 1.0 / k, best_epoch: best.1, best_error: best.0, hand_error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::games::chess::{Chess, net};
    use cozy_chess::{Color, Piece};

    /// Small settings: 16 hidden values, 2 output buckets, no king regions.
    fn options() -> Options {
        Options {
            hidden: 16,
            epochs: 1,
            lambda: 0.0,
            batch: 1,
            rate: 0.001,
            residual: true,
            threads: 1,
            seed: 1,
            mirror: false,
            buckets: 2,
            kings: false,
            factorise: false,
            init: None,
            smooth: None,
            k: None,
        }
    }

    #[test]
    fn the_engine_evaluates_what_the_trained_network_computes() {
        // A random network of the engine's size, written in the engine's fixed point and read back: the
        // engine's evaluation of each position is the float network's output in centi-pawns, within rounding,
        // with one output bucket (the first file format), with eight (the second) and with eight and king
        // regions (the third, each region's weights its own), along a game that goes from 32 pieces down
        // through several buckets and regions.
        for (buckets, kings) in [(1, false), (8, false), (8, true)] {
            let mut rng = Rng(7);
            let regions = if kings { net::KING_BUCKETS } else { 1 };
            let mut f = FloatNet::new(net::INPUTS * regions, net::HIDDEN, buckets, &mut rng);
            f.w1.iter_mut().for_each(|w| *w *= 3.0);
            // Biases 48 centi-pawns apart, so that a wrong bucket shows.
            f.b2.iter_mut().enumerate().for_each(|(i, b)| *b = 0.3 * i as f32 - 1.0);
            let scale = 160.0;
            let bytes = net::write(&f, scale, false).unwrap();
            let magic = match (buckets, kings) {
                (1, _) => net::MAGIC_V1,
                (_, false) => net::MAGIC,
                _ => net::MAGIC_V3,
            };
            assert_eq!(&bytes[..8], magic);
            let engine = net::Network::from_bytes(&bytes).unwrap();
            let mut g = Chess::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4").unwrap();
            let (mut white, mut moves, mut acc) = (Vec::new(), Vec::new(), vec![0.0; 2 * net::HIDDEN]);
            let (mut spread, mut seen, mut seen_kings) =
                (0.0f32, std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
            let mut buf = Vec::new();
            for _ in 0..120 {
                net::white_features(g.board(), &mut white);
                // The trainer's views, in their king regions where the network has them.
                let samples = {
                    let mut s = Samples::new();
                    s.push(&g, &white, 0.5, 0.0);
                    s
                };
                let (n, pieces, _) = views::<Chess>(&samples, 0, &Options { kings, ..options() }, &mut buf);
                let (white, black) = buf.split_at(n);
                assert_eq!(n, pieces);
                if kings {
                    seen_kings.insert(Chess::net_king_bucket(white));
                    let unshifted: Vec<u16> = black.iter().map(|&x| x % net::INPUTS as u16).collect();
                    seen_kings.insert(Chess::net_king_bucket(&unshifted));
                }
                let first = g.side_to_move() == Side::First;
                let (own, other) = if first { (white, black) } else { (black, white) };
                let bucket = Chess::net_output_bucket(white.len(), buckets);
                seen.insert(bucket);
                let expected = f.forward(own, other, bucket, &mut acc) * scale;
                let got = engine.evaluate(g.board()) as f32;
                // Rounding: 1/255 on each of 32 first-layer weights, 1/64 on each of 2 · HIDDEN output weights
                // (the first layer of the wrong king region would be another random layer, far outside this).
                let tolerance = 10.0 * (net::HIDDEN as f32 / 128.0) + expected.abs() * 0.04;
                assert!((got - expected).abs() <= tolerance, "{}: {got} against {expected}", g.to_fen());
                spread = spread.max(expected.abs());
                g.generate_moves(&mut moves);
                // Captures first, to come down through the stages of the game.
                let theirs = g.board().colors(!g.board().side_to_move());
                let captures: Vec<_> = moves.iter().copied().filter(|m| theirs.has(m.to)).collect();
                let pick = if captures.is_empty() { &moves } else { &captures };
                if pick.is_empty() {
                    break;
                }
                g.make(pick[rng.below(pick.len())]);
            }
            assert!(spread > 20.0, "the outputs are not all near zero: {spread}");
            assert!(seen.len() >= buckets.min(4), "{buckets} buckets, {seen:?} seen");
            assert!(!kings || seen_kings.len() >= 4, "king regions {seen_kings:?} seen");
            // A damaged file is refused with a reason.
            assert!(net::Network::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err().contains("ends inside"));
        }
        assert!(net::Network::from_bytes(b"KBZNET9\n").unwrap_err().contains("not a kibitz"));
        // A bucket count out of range is refused, naming it.
        let mut rng = Rng(9);
        let mut bytes = net::write(&FloatNet::new(net::INPUTS, net::HIDDEN, 2, &mut rng), 160.0, true).unwrap();
        bytes[24..28].copy_from_slice(&0u32.to_le_bytes());
        assert!(net::Network::from_bytes(&bytes).unwrap_err().contains("0 output buckets"));
        // So is a count of king regions the engine has no layout for.
        let mut f = FloatNet::new(net::INPUTS * net::KING_BUCKETS, net::HIDDEN, 2, &mut rng);
        f.w2.iter_mut().for_each(|w| *w = 0.0);
        let mut bytes = net::write(&f, 160.0, true).unwrap();
        assert!(net::Network::from_bytes(&bytes).is_ok());
        bytes[28..32].copy_from_slice(&3u32.to_le_bytes());
        assert!(net::Network::from_bytes(&bytes).unwrap_err().contains("3 king regions"));
    }

    #[test]
    fn a_network_of_another_size_is_written_and_refused_by_this_engine() {
        // The trainer writes any hidden size (to try one before building the engine for it); the engine
        // refuses what it is not built for, naming the size.
        let mut rng = Rng(3);
        let other = 2 * net::HIDDEN;
        let f = FloatNet::new(net::INPUTS, other, 1, &mut rng);
        let bytes = net::write(&f, 160.0, true).unwrap();
        assert_eq!(bytes.len(), 24 + 2 * (net::INPUTS * other + 3 * other) + 4);
        let err = net::Network::from_bytes(&bytes).unwrap_err();
        assert!(err.contains(&format!("{other} hidden values")), "{err}");
        assert!(
            net::write(&FloatNet::new(10, net::HIDDEN, 1, &mut rng), 160.0, true).unwrap_err().contains("10 inputs")
        );
    }

    #[test]
    fn a_network_file_reads_back_into_the_floats_it_holds() {
        // Any hidden size, one bucket (the first format) or several: read back and written again, the file is
        // the same bytes, and each value is the float it was written from within the rounding.
        for (hidden, buckets, residual) in [(2 * net::HIDDEN, 8, true), (24, 1, false)] {
            let mut rng = Rng(11);
            let mut f = FloatNet::new(net::INPUTS, hidden, buckets, &mut rng);
            f.b2.iter_mut().enumerate().for_each(|(i, b)| *b = 0.37 * i as f32 - 1.1);
            let bytes = net::write(&f, 151.5, residual).unwrap();
            let (back, scale, back_residual) = net::read_float(&bytes).unwrap();
            assert_eq!((back.hidden, back.b2.len(), scale, back_residual), (hidden, buckets, 151.5, residual));
            assert_eq!(net::write(&back, scale, residual).unwrap(), bytes);
            let close =
                |a: &[f32], b: &[f32], q: i32| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 0.5 / q as f32 + 1e-6);
            assert!(close(&back.w1, &f.w1, net::QA) && close(&back.b1, &f.b1, net::QA));
            assert!(close(&back.w2, &f.w2, net::QB) && close(&back.b2, &f.b2, net::QA * net::QB));
            assert!(net::read_float(&bytes[..bytes.len() - 3]).unwrap_err().contains("ends inside"));
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(net::read_float(&longer).unwrap_err().contains("1 bytes after"));
        }
    }

    #[test]
    fn the_largest_output_the_engine_reads_is_summed_without_overflow() {
        // Every hidden value at its clip (a bias of 1.0) and every output weight at the trainer's limit: the
        // largest sum the trainer writes (the reader accepts one rounding step more), about
        // 2 · HIDDEN · QA² · 2 · QB, beyond an i32 from 256 hidden values on. The engine gives the float
        // network's output all the same, with either sign.
        for sign in [1.0f32, -1.0] {
            let mut f = FloatNet::new(net::INPUTS, net::HIDDEN, 1, &mut Rng(3));
            f.w1.iter_mut().for_each(|w| *w = 0.0);
            f.b1.iter_mut().for_each(|b| *b = 1.0);
            f.w2.iter_mut().for_each(|w| *w = sign * W2_LIMIT);
            let scale = 1.0;
            let engine = net::Network::from_bytes(&net::write(&f, scale, false).unwrap()).unwrap();
            let g = Chess::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4").unwrap();
            let expected = sign * 2.0 * net::HIDDEN as f32 * W2_LIMIT * scale;
            let got = engine.evaluate(g.board()) as f32;
            // Output weights are rounded to 1/64.
            assert!((got - expected).abs() <= expected.abs() * 0.01 + 1.0, "{got} against {expected}");
        }
    }

    #[test]
    fn a_training_started_from_a_network_predicts_what_it_did() {
        const SHAPE: (usize, usize) = (net::INPUTS, net::KING_BUCKETS);
        // Started at another K, the network's outputs keep their centi-units: a unit of the file is 150
        // centi-units, one of the training 1/K.
        let mut rng = Rng(5);
        let mut init = FloatNet::new(net::INPUTS, 16, 2, &mut rng);
        init.w2.iter_mut().for_each(|w| *w *= 0.5);
        let o = options();
        let (init_scale, k) = (150.0, 0.004);
        let started = start_from(&init, init_scale, k, SHAPE, &o, &mut rng).unwrap();
        // Widened to 40 hidden values, it computes the same, and the new values are live: their first-layer
        // weights are not zero, so the training can use them.
        let wide = start_from(&init, init_scale, k, SHAPE, &Options { hidden: 40, ..o.clone() }, &mut rng).unwrap();
        assert_eq!((wide.hidden, wide.w1.len(), wide.b1.len(), wide.w2.len()), (40, 768 * 40, 40, 2 * 2 * 40));
        assert!(wide.w1[16..40].iter().all(|&w| w != 0.0) && wide.w1[40..56] == init.w1[16..32]);
        let (own, other) = ([3u16, 100, 700], [5u16, 300]);
        for bucket in 0..2 {
            let before = init.forward(&own, &other, bucket, &mut [0.0; 32]) * init_scale;
            for net in [&started, &wide] {
                let after = net.forward(&own, &other, bucket, &mut vec![0.0; 2 * net.hidden]) / k;
                assert!((before - after).abs() < 1e-3 * before.abs().max(1.0), "{before} against {after}");
            }
        }
        // A narrower network or other buckets are refused, naming both shapes.
        let err = start_from(&init, init_scale, k, SHAPE, &Options { hidden: 8, ..o.clone() }, &mut rng).unwrap_err();
        assert!(err.contains("16 hidden values") && err.contains("768, 8 (at least as many) and 2"), "{err}");
        assert!(start_from(&init, init_scale, k, SHAPE, &Options { buckets: 8, ..o.clone() }, &mut rng).is_err());
        // Given king regions, each region starts as the network's one first layer: the same outputs whatever
        // the region, widened as well.
        let kings = Options { kings: true, hidden: 40, ..o };
        let regions = start_from(&init, init_scale, k, SHAPE, &kings, &mut rng).unwrap();
        assert_eq!((regions.inputs, regions.w1.len()), (768 * net::KING_BUCKETS, 768 * net::KING_BUCKETS * 40));
        for bucket in 0..2 {
            let before = init.forward(&own, &other, bucket, &mut [0.0; 32]) * init_scale;
            for region in [0u16, 3, net::KING_BUCKETS as u16 - 1] {
                let shift = |v: &[u16]| v.iter().map(|&x| x + region * 768).collect::<Vec<_>>();
                let after = regions.forward(&shift(&own), &shift(&other), bucket, &mut [0.0; 80]) / k;
                assert!((before - after).abs() < 1e-3 * before.abs().max(1.0), "{region}: {before} against {after}");
            }
        }
        // Started from a network with regions, it keeps them.
        let again = start_from(&regions, 1.0 / k, k, SHAPE, &kings, &mut rng).unwrap();
        assert_eq!(again.w1, regions.w1);
        // Factorised, a network without regions becomes the shared block and the regions' own weights start at
        // zero (but for the widened values'): the same outputs whatever the region, each piece counted in its
        // region and in the shared block.
        let fact = Options { factorise: true, ..kings };
        let shared = start_from(&init, init_scale, k, SHAPE, &fact, &mut rng).unwrap();
        let blocks = net::KING_BUCKETS + 1;
        assert_eq!((shared.inputs, shared.w1.len()), (768 * blocks, 768 * blocks * 40));
        assert!(shared.w1.chunks(40).take(768 * net::KING_BUCKETS).all(|row| row[..16].iter().all(|&w| w == 0.0)));
        for bucket in 0..2 {
            let before = init.forward(&own, &other, bucket, &mut [0.0; 32]) * init_scale;
            for region in [0u16, 3, net::KING_BUCKETS as u16 - 1] {
                let both = |v: &[u16]| {
                    let common = v.iter().map(|&x| x + net::KING_BUCKETS as u16 * 768);
                    v.iter().map(|&x| x + region * 768).chain(common).collect::<Vec<_>>()
                };
                let after = shared.forward(&both(&own), &both(&other), bucket, &mut [0.0; 80]) / k;
                assert!((before - after).abs() < 1e-3 * before.abs().max(1.0), "{region}: {before} against {after}");
            }
        }
        // Factorised from a network with regions: they are kept and the shared block starts at zero.
        let kept = start_from(&regions, 1.0 / k, k, SHAPE, &fact, &mut rng).unwrap();
        assert_eq!(kept.w1[..regions.w1.len()], regions.w1[..]);
        assert!(kept.w1[regions.w1.len()..].iter().all(|&w| w == 0.0) && kept.w1.len() == 768 * blocks * 40);
        // And a factorised network itself trains on as it is.
        assert_eq!(start_from(&kept, 1.0 / k, k, SHAPE, &fact, &mut rng).unwrap().w1, kept.w1);
    }

    /// Positions of random games from the start, as self-play files write them (`POSITION;result;score`): the
    /// score the material balance, the result of each game drawn at random.
    fn random_games(games: usize, plies: usize, seed: u64) -> Vec<String> {
        let mut rng = Rng(seed);
        let mut lines = Vec::new();
        let mut moves = Vec::new();
        for _ in 0..games {
            let result = ["0.0", "0.5", "1.0"][rng.below(3)];
            let mut g = Chess::start();
            for _ in 0..plies {
                g.generate_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                g.make(moves[rng.below(moves.len())]);
                let b = g.board();
                let material = |c| {
                    [
                        (Piece::Pawn, 100),
                        (Piece::Knight, 300),
                        (Piece::Bishop, 300),
                        (Piece::Rook, 500),
                        (Piece::Queen, 900),
                    ]
                    .iter()
                    .map(|&(p, v)| v * (b.pieces(p) & b.colors(c)).len() as i32)
                    .sum::<i32>()
                };
                lines.push(format!("{};{result};{}", g.to_fen(), material(Color::White) - material(Color::Black)));
            }
        }
        lines
    }

    #[test]
    fn a_factorised_first_layer_is_written_as_the_regions_it_sums_to() {
        // Each piece of a factorised training's view counts in its king's region and in the shared block; the
        // network written adds the shared block into every region. Along random games through several regions,
        // the folded network on the regions' views computes what the factorised one did on its views.
        let mut rng = Rng(13);
        let regions = net::KING_BUCKETS;
        let f = FloatNet::new(net::INPUTS * (regions + 1), 16, 2, &mut rng);
        let plain = folded(&f, net::INPUTS, regions);
        assert_eq!(
            (plain.inputs, plain.w1.len(), plain.b1.clone(), plain.w2.clone()),
            (768 * regions, 768 * regions * 16, f.b1.clone(), f.w2.clone())
        );
        let (fact, kings) =
            (Options { kings: true, factorise: true, ..options() }, Options { kings: true, ..options() });
        let (mut samples, mut features) = (Samples::new(), Vec::new());
        for line in random_games(20, 60, 5) {
            let g = Chess::from_fen(line.split(';').next().unwrap()).unwrap();
            if g.net_features(&mut features) {
                samples.push(&g, &features, 0.5, 0.0);
            }
        }
        let (mut a, mut b, mut acc) = (Vec::new(), Vec::new(), vec![0.0; 32]);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..samples.len() {
            let (n, pieces, first) = views::<Chess>(&samples, i, &fact, &mut a);
            let (m, _, _) = views::<Chess>(&samples, i, &kings, &mut b);
            assert_eq!((n, m), (2 * pieces, pieces));
            // The shared block's inputs are the view's own, moved past every region.
            let shift = (regions * 768) as u16;
            assert!(a[pieces..n].iter().zip(&b[..m]).all(|(&s, &r)| s - shift == r % 768 && r / 768 < regions as u16));
            seen.insert(b[0] / 768);
            let bucket = Chess::net_output_bucket(pieces, 2);
            let ((aw, ab), (bw, bb)) = (a.split_at(n), b.split_at(m));
            let sides = |w, b| if first { (w, b) } else { (b, w) };
            let ((ao, ax), (bo, bx)) = (sides(aw, ab), sides(bw, bb));
            let (want, got) = (f.forward(ao, ax, bucket, &mut acc), plain.forward(bo, bx, bucket, &mut acc));
            assert!((want - got).abs() < 1e-4, "{i}: {want} against {got}");
        }
        assert!(seen.len() >= 3, "king regions {seen:?} seen");
    }

    #[test]
    fn a_factorised_training_writes_a_network_the_engine_reads() {
        // End to end on a small file: started from a network without regions, trained factorised for two
        // epochs, the network kept is the engine's layout with regions, reads in the engine, and does better on
        // the held-out positions than where it started.
        let path = std::env::temp_dir().join(format!("kibitz-factorise-{}.txt", std::process::id()));
        std::fs::write(&path, random_games(260, 60, 8).join("\n") + "\n").unwrap();
        let paths = [path.to_string_lossy().into_owned()];
        let mut rng = Rng(17);
        let mut init = FloatNet::new(net::INPUTS, net::HIDDEN, 8, &mut rng);
        init.w2.iter_mut().for_each(|w| *w *= 0.2);
        let o = Options {
            hidden: net::HIDDEN,
            epochs: 2,
            batch: 256,
            buckets: 8,
            kings: true,
            factorise: true,
            init: Some((init, 100.0)),
            ..options()
        };
        let mut lines = Vec::new();
        let trained = train::<Chess>(&paths, &o, &mut |line| lines.push(line));
        std::fs::remove_file(&path).unwrap();
        let trained = trained.unwrap();
        assert_eq!(trained.net.inputs, net::INPUTS * net::KING_BUCKETS, "{lines:?}");
        let start: f64 = lines
            .iter()
            .find_map(|l| l.strip_prefix("the starting network's held-out error "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(trained.best_epoch >= 1 && trained.best_error < start, "{lines:?}");
        let bytes = net::write(&trained.net, trained.scale, true).unwrap();
        assert_eq!(&bytes[..8], net::MAGIC_V3);
        assert!(net::Network::from_bytes(&bytes).is_ok());
    }

    #[test]
    fn the_error_a_training_reports_is_the_one_its_file_gives() {
        // Trained through the engine's fixed point, the network kept is one the engine stores exactly: its
        // file, read back, has the held-out error the training reported. Started from a network file, the
        // training keeps its scale, so that the file's weights stay on the fixed point, and a training that
        // cannot improve on it writes the same file back.
        let path = std::env::temp_dir().join(format!("kibitz-fixed-point-{}.txt", std::process::id()));
        std::fs::write(&path, random_games(200, 60, 21).join("\n") + "\n").unwrap();
        let paths = [path.to_string_lossy().into_owned()];
        let o = Options { hidden: net::HIDDEN, epochs: 2, batch: 64, buckets: 8, lambda: 0.3, ..options() };
        let trained = train::<Chess>(&paths, &o, &mut |_| {});
        let (_, valid, _) = load::<Chess>(&paths, false, None).unwrap();
        let trained = trained.unwrap();
        assert!(trained.best_epoch >= 1);
        let bytes = net::write(&trained.net, trained.scale, true).unwrap();
        let (back, scale, _) = net::read_float(&bytes).unwrap();
        let reread = error::<Chess>(&back, &valid, 1.0 / scale, &o);
        // (Within the float rounding of K through the file's scale; the real positions' rounding cost, 0.28%, is
        // in BENCHMARKS.md.)
        assert!((reread - trained.best_error).abs() <= 1e-6 * reread, "{reread} against {}", trained.best_error);
        // From that file, at a rate too small to move a weight by a step of the fixed point: the same scale,
        // the same error, the same bytes.
        let again = Options { init: Some((back, scale)), rate: 1e-9, ..o };
        let mut lines = Vec::new();
        let second = train::<Chess>(&paths, &again, &mut |l| lines.push(l));
        std::fs::remove_file(&path).unwrap();
        let second = second.unwrap();
        assert_eq!(second.scale, scale);
        assert!((second.best_error - reread).abs() <= 1e-6 * reread, "{lines:?}");
        assert_eq!(net::write(&second.net, second.scale, true).unwrap(), bytes);
    }

    #[test]
    fn a_given_k_sets_the_targets_scale_and_a_bad_one_is_refused() {
        let path = std::env::temp_dir().join(format!("kibitz-given-k-{}.txt", std::process::id()));
        std::fs::write(&path, random_games(200, 60, 22).join("\n") + "\n").unwrap();
        let paths = [path.to_string_lossy().into_owned()];
        let o = Options { epochs: 1, batch: 64, k: Some(0.004), ..options() };
        let mut lines = Vec::new();
        let trained = train::<Chess>(&paths, &o, &mut |l| lines.push(l)).unwrap();
        assert!(lines[0].contains("K = 0.004000"), "{lines:?}");
        assert!((trained.scale - 250.0).abs() < 1e-3, "{}", trained.scale);
        for bad in [0.0, -0.01, f32::NAN, f32::INFINITY] {
            let e = train::<Chess>(&paths, &Options { k: Some(bad), ..o.clone() }, &mut |_| {}).err().unwrap();
            assert!(e.contains("positive"), "{e}");
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn smoothing_weighs_the_later_scores_of_the_game_by_their_distance() {
        let game = [(10, 100.0), (11, 0.0), (12, -100.0), (15, 40.0)];
        let smoothed = Smoothing { lambda: 0.5, plies: 3 }.apply(&game);
        // 75 / 1.75 and -50 / 1.5, rounded to whole centi-units.
        assert_eq!(smoothed, [43.0, -33.0, -100.0, 40.0]);
        // A half goes to the even one: 0.5 to 0, 1.5 to 2.
        assert_eq!(Smoothing { lambda: 1.0, plies: 2 }.apply(&[(0, 1.0), (1, 0.0), (2, 3.0)]), [0.0, 2.0, 3.0]);
        // Lambda 0: each position keeps its own score.
        let same = Smoothing { lambda: 0.0, plies: 12 }.apply(&game);
        assert_eq!(same, game.map(|(_, s)| s));
    }

    #[test]
    fn smoothing_keeps_to_each_game_of_a_file() {
        // Three games: the plies of the second start lower than the first's end, the third's result differs.
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let lines = [
            format!("{start} w KQkq - 0 3;1.0;100"),
            format!("{start} b KQkq - 0 3;1.0;0"),
            format!("{start} w KQkq - 0 4;1.0;-100"),
            format!("{start} w KQkq - 0 2;1.0;50"),
            format!("{start} b KQkq - 0 2;0.5;30"),
        ];
        let path = std::env::temp_dir().join(format!("kibitz-smooth-{}.txt", std::process::id()));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let paths = [path.to_string_lossy().into_owned()];
        let (plain, _, _) = load::<Chess>(&paths, false, None).unwrap();
        assert_eq!(plain.score, [100.0, 0.0, -100.0, 50.0, 30.0]);
        let (smoothed, valid, skipped) =
            load::<Chess>(&paths, false, Some(Smoothing { lambda: 0.5, plies: 3 })).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((smoothed.len(), valid.len(), skipped), (5, 0, 0));
        assert_eq!(smoothed.score, [43.0, -33.0, -100.0, 50.0, 30.0]);
        assert_eq!(smoothed.result, [1.0, 1.0, 1.0, 1.0, 0.5]);
    }

    #[test]
    fn the_shipped_network_loads() {
        let n = crate::games::chess::shipped_network().unwrap();
        assert!(n.residual);
    }
}
