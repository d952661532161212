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
    refunded: u32,
}

impl TurnBudget {
    /// A budget of `max` calls (at least one).
    pub fn new(max: u32) -> Self {
        Self {
            max: max.max(1),
            used: 0,
            grace_used: false,
            refunded: 0,
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
    /// At most `max` calls are given back per turn, so a model that only ever runs
    /// scripts still meets the budget (at twice the usual number of calls).
    pub fn refund(&mut self) {
        if self.refunded < self.max && self.used > 0 {
            self.refunded += 1;
            self.used -= 1;
        }
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
    fn refunds_are_capped_at_the_budget() {
        let mut b = TurnBudget::new(2);
        let mut normal = 0;
        while b.next_call() == CallKind::Normal {
            normal += 1;
            b.refund();
            assert!(normal < 100, "refunds must not make the budget endless");
        }
        assert_eq!(normal, 4, "two calls plus two refunds");
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
