//! The iteration budget of one turn, as a tiny state machine with no I/O.

/// What kind of model call comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// Within budget: tools offered and executed.
    Normal,
    /// Budget spent after a tool round: one more call so the model can answer.
    /// Tool calls it makes are not executed.
    Grace,
    /// The model kept calling tools: ask for a summary with no tools offered.
    Summary,
}

/// Counts API calls against `agent.max_turns` / `--max-turns`.
#[derive(Debug, Clone)]
pub struct TurnBudget {
    max: u32,
    used: u32,
    grace_used: bool,
}

impl TurnBudget {
    /// A budget of `max` calls (at least one).
    pub fn new(max: u32) -> Self {
        Self {
            max: max.max(1),
            used: 0,
            grace_used: false,
        }
    }

    /// Decides the next call and consumes budget for it.
    pub fn next_call(&mut self) -> CallKind {
        if self.used < self.max {
            self.used += 1;
            CallKind::Normal
        } else if !self.grace_used {
            self.grace_used = true;
            CallKind::Grace
        } else {
            CallKind::Summary
        }
    }

    /// Calls counted against the budget so far.
    pub fn used(&self) -> u32 {
        self.used
    }

    /// Gives back one call (for calls that should not count, such as code-mediated tool use).
    pub fn refund(&mut self) {
        self.used = self.used.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_then_grace_then_summary() {
        let mut b = TurnBudget::new(2);
        assert_eq!(b.next_call(), CallKind::Normal);
        assert_eq!(b.next_call(), CallKind::Normal);
        assert_eq!(b.next_call(), CallKind::Grace);
        assert_eq!(b.next_call(), CallKind::Summary);
        assert_eq!(b.used(), 2);
    }

    #[test]
    fn zero_means_one_and_refund_gives_back() {
        let mut b = TurnBudget::new(0);
        assert_eq!(b.next_call(), CallKind::Normal);
        b.refund();
        assert_eq!(b.next_call(), CallKind::Normal);
        assert_eq!(b.next_call(), CallKind::Grace);
    }
}
