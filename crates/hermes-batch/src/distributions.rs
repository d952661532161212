//! Toolset distributions: for each prompt, which toolsets the session gets.
//! The reference's seventeen distributions, with its names, descriptions and
//! percentages; each toolset is an independent draw.

use hermes_llm::credentials::{RandomSource, SplitMix64};

/// A named distribution: each toolset with its chance (percent) of being enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distribution {
    /// Its name (`--distribution NAME`).
    pub name: &'static str,
    /// One line saying what it is for.
    pub description: &'static str,
    /// `(toolset, percent)`, in the reference's order.
    pub toolsets: &'static [(&'static str, u32)],
}

const fn dist(
    name: &'static str,
    description: &'static str,
    toolsets: &'static [(&'static str, u32)],
) -> Distribution {
    Distribution {
        name,
        description,
        toolsets,
    }
}

/// Every distribution, in the reference's order.
pub const DISTRIBUTIONS: &[Distribution] = &[
    dist(
        "default",
        "All available tools, all the time",
        &[
            ("web", 100),
            ("vision", 100),
            ("image_gen", 100),
            ("terminal", 100),
            ("file", 100),
            ("browser", 100),
        ],
    ),
    dist(
        "image_gen",
        "Heavy focus on image generation with vision and web support",
        &[
            ("image_gen", 90),
            ("vision", 90),
            ("web", 55),
            ("terminal", 45),
        ],
    ),
    dist(
        "research",
        "Web research with vision analysis and reasoning",
        &[
            ("web", 90),
            ("browser", 70),
            ("vision", 50),
            ("terminal", 10),
        ],
    ),
    dist(
        "science",
        "Scientific research with web, terminal, file, and browser capabilities",
        &[
            ("web", 94),
            ("terminal", 94),
            ("file", 94),
            ("vision", 65),
            ("browser", 50),
            ("image_gen", 15),
        ],
    ),
    dist(
        "development",
        "Terminal, file tools, and reasoning with occasional web lookup",
        &[("terminal", 80), ("file", 80), ("web", 30), ("vision", 10)],
    ),
    dist(
        "safe",
        "All tools except terminal for safety",
        &[
            ("web", 80),
            ("browser", 70),
            ("vision", 60),
            ("image_gen", 60),
        ],
    ),
    dist(
        "balanced",
        "Equal probability of all toolsets",
        &[
            ("web", 50),
            ("vision", 50),
            ("image_gen", 50),
            ("terminal", 50),
            ("file", 50),
            ("browser", 50),
        ],
    ),
    dist(
        "minimal",
        "Only web tools for basic research",
        &[("web", 100)],
    ),
    dist(
        "terminal_only",
        "Terminal and file tools for code execution tasks",
        &[("terminal", 100), ("file", 100)],
    ),
    dist(
        "terminal_web",
        "Terminal and file tools with web search for documentation lookup",
        &[("terminal", 100), ("file", 100), ("web", 100)],
    ),
    dist(
        "creative",
        "Image generation and vision analysis focus",
        &[("image_gen", 90), ("vision", 90), ("web", 30)],
    ),
    dist(
        "reasoning",
        "Heavy research/reasoning distribution with minimal other tools",
        &[("web", 90), ("file", 60), ("terminal", 20)],
    ),
    dist(
        "browser_use",
        "Full browser-based web interaction with search, vision, and page control",
        &[("browser", 100), ("web", 80), ("vision", 70)],
    ),
    dist(
        "browser_only",
        "Only browser automation tools for pure web interaction tasks",
        &[("browser", 100)],
    ),
    dist(
        "browser_tasks",
        "Browser-focused distribution (browser toolset includes web_search for finding URLs since Google blocks direct browser searches)",
        &[("browser", 97), ("vision", 12), ("terminal", 15)],
    ),
    dist(
        "terminal_tasks",
        "Terminal-focused distribution with high terminal/file availability, occasional other tools",
        &[
            ("terminal", 97),
            ("file", 97),
            ("web", 97),
            ("browser", 75),
            ("vision", 50),
            ("image_gen", 10),
        ],
    ),
    dist(
        "mixed_tasks",
        "Mixed distribution with high browser, terminal, and file availability for complex tasks",
        &[
            ("browser", 92),
            ("terminal", 92),
            ("file", 92),
            ("web", 35),
            ("vision", 15),
            ("image_gen", 15),
        ],
    ),
];

/// The distribution called `name`.
pub fn get(name: &str) -> Option<&'static Distribution> {
    DISTRIBUTIONS.iter().find(|d| d.name == name)
}

/// Every distribution name, in the reference's order.
pub fn names() -> Vec<&'static str> {
    DISTRIBUTIONS.iter().map(|d| d.name).collect()
}

/// Every distribution sorted by name (as `--list-distributions` shows them).
pub fn sorted() -> Vec<&'static Distribution> {
    let mut all: Vec<&Distribution> = DISTRIBUTIONS.iter().collect();
    all.sort_by_key(|d| d.name);
    all
}

/// Whether `toolset` names one of our toolsets.
pub fn is_valid_toolset(toolset: &str) -> bool {
    hermes_tools::toolsets::find(toolset).is_some()
}

/// Uniform floats in `[0, 1)`, the dice the sampling rolls.
pub trait Dice {
    /// The next number in `[0, 1)`.
    fn roll(&mut self) -> f64;
}

/// Dice from a SplitMix64 stream (seeded, reproducible).
#[derive(Debug, Clone)]
pub struct SeededDice(SplitMix64);

impl SeededDice {
    /// Dice for the prompt at `index` of a run seeded with `seed`: each
    /// prompt has its own stream, so the toolsets a prompt gets do not depend
    /// on the order prompts finish in, nor on which ones an earlier run did.
    pub fn for_prompt(seed: u64, index: usize) -> Self {
        let mut mix = SplitMix64::new(index as u64);
        Self(SplitMix64::new(seed ^ mix.next_u64()))
    }
}

impl Dice for SeededDice {
    fn roll(&mut self) -> f64 {
        // The top 53 bits make a float with every value equally likely.
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What one draw picked, and the warnings it raised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sample {
    /// Toolsets to enable, in the distribution's order.
    pub toolsets: Vec<String>,
    /// Toolsets of the distribution that are not valid here.
    pub warnings: Vec<String>,
}

/// Draws the toolsets for one prompt: each valid toolset is enabled with its
/// own chance; when none is, the one with the highest chance (the first on a
/// tie) is used. `valid` says which toolset names exist.
pub fn sample(dist: &Distribution, dice: &mut dyn Dice, valid: impl Fn(&str) -> bool) -> Sample {
    let mut out = Sample::default();
    for (toolset, percent) in dist.toolsets {
        if !valid(toolset) {
            out.warnings.push(format!(
                "Toolset '{toolset}' in distribution '{}' is not valid",
                dist.name
            ));
            continue;
        }
        if dice.roll() * 100.0 < f64::from(*percent) {
            out.toolsets.push((*toolset).to_owned());
        }
    }
    if out.toolsets.is_empty() {
        let best = dist
            .toolsets
            .iter()
            .fold(None::<&(&str, u32)>, |best, t| match best {
                Some(b) if b.1 >= t.1 => Some(b),
                _ => Some(t),
            });
        if let Some((toolset, _)) = best.filter(|(t, _)| valid(t)) {
            out.toolsets.push((*toolset).to_owned());
        }
    }
    out
}

#[cfg(test)]
#[path = "distributions_tests.rs"]
mod tests;
