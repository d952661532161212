//! The set of tools an agent can offer, looked up by name.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use hermes_protocol::ToolSchema;

use crate::Tool;
use crate::toolsets::{ResolvedToolsets, resolve};

/// Registered tools by wire name. The generation counter changes on every
/// mutation so callers can cache derived data (schemas) safely.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    generation: u64,
    /// The schemas, built once per generation and shared by every request.
    schemas: std::sync::OnceLock<Arc<[ToolSchema]>>,
    /// Where equal schema sets of other registries are found and shared.
    interner: Option<SchemaInterner>,
}

/// Shares equal schema sets between registries: many sessions offering the
/// same tools then hold one copy of the schemas instead of one each.
#[derive(Clone, Default)]
pub struct SchemaInterner {
    sets: Arc<Mutex<Vec<Weak<[ToolSchema]>>>>,
}

impl std::fmt::Debug for SchemaInterner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaInterner").finish_non_exhaustive()
    }
}

impl SchemaInterner {
    /// The live set equal to `built`, or `built` itself, now shared.
    pub fn intern(&self, built: Vec<ToolSchema>) -> Arc<[ToolSchema]> {
        let mut sets = self.sets.lock().unwrap_or_else(PoisonError::into_inner);
        sets.retain(|w| w.strong_count() > 0);
        if let Some(same) = sets
            .iter()
            .filter_map(Weak::upgrade)
            .find(|set| **set == *built)
        {
            return same;
        }
        let set: Arc<[ToolSchema]> = built.into();
        sets.push(Arc::downgrade(&set));
        set
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("generation", &self.generation)
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shares this registry's schemas (and those of registries derived from
    /// it) with equal sets built through the same interner.
    pub fn share_schemas_through(&mut self, interner: SchemaInterner) {
        self.interner = Some(interner);
        self.schemas = std::sync::OnceLock::new();
    }

    /// A registry holding every built-in tool.
    pub fn with_builtins() -> Self {
        let mut reg = Self::new();
        for tool in crate::builtin::all() {
            reg.register(tool);
        }
        reg
    }

    /// Adds or replaces a tool.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_owned(), tool);
        self.generation += 1;
        self.schemas = std::sync::OnceLock::new();
    }

    /// Removes a tool; returns whether it was present.
    pub fn unregister(&mut self, name: &str) -> bool {
        let removed = self.tools.remove(name).is_some();
        if removed {
            self.generation += 1;
            self.schemas = std::sync::OnceLock::new();
        }
        removed
    }

    /// Bumped on every change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The tool with this exact name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// All tool names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Keeps only the tools selected by `toolsets` whose availability check
    /// passes; also returns the names that are neither a toolset nor a tool.
    pub fn filtered(&self, toolsets: &[String]) -> (Registry, Vec<String>) {
        let selection: ResolvedToolsets = resolve(toolsets, |n| self.tools.contains_key(n));
        let tools = self
            .tools
            .iter()
            .filter(|(name, tool)| selection.selects(name, tool.toolset()) && tool.check().is_ok())
            .map(|(n, t)| (n.clone(), Arc::clone(t)))
            .collect();
        let registry = Registry {
            tools,
            generation: self.generation + 1,
            schemas: std::sync::OnceLock::new(),
            interner: self.interner.clone(),
        };
        (registry, selection.unknown.into_iter().collect())
    }

    /// Schemas of every tool, sorted by name (a stable order keeps prompt caches warm).
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.shared_schemas().to_vec()
    }

    /// The same, shared: built once per generation, so the requests of many
    /// sessions do not each hold their own copy.
    pub fn shared_schemas(&self) -> Arc<[ToolSchema]> {
        self.schemas
            .get_or_init(|| {
                let built: Vec<ToolSchema> = self.tools.values().map(|t| t.schema()).collect();
                match &self.interner {
                    Some(interner) => interner.intern(built),
                    None => built.into(),
                }
            })
            .clone()
    }

    /// The registered name closest to `name`, if it is close enough to be a typo.
    pub fn closest(&self, name: &str) -> Option<&str> {
        let wanted = normalize_name(name);
        if let Some(exact) = self.tools.keys().find(|k| normalize_name(k) == wanted) {
            return Some(exact);
        }
        self.tools
            .keys()
            .map(|k| {
                (
                    k,
                    strsim::normalized_damerau_levenshtein(&normalize_name(k), &wanted),
                )
            })
            .filter(|(_, score)| *score >= 0.7)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k.as_str())
    }
}

/// Case-, separator- and namespace-insensitive form of a tool name.
fn normalize_name(name: &str) -> String {
    let base = name.rsplit(['.', ':', '/']).next().unwrap_or(name);
    base.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_registered_and_sorted() {
        let reg = Registry::with_builtins();
        let names: Vec<_> = reg.names().collect();
        assert!(names.contains(&"terminal") && names.contains(&"read_file"));
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn equal_schema_sets_are_shared_through_an_interner() {
        let interner = SchemaInterner::default();
        let mut a = Registry::with_builtins();
        a.share_schemas_through(interner.clone());
        let mut b = Registry::with_builtins();
        b.share_schemas_through(interner.clone());
        assert!(Arc::ptr_eq(&a.shared_schemas(), &b.shared_schemas()));
        // A different selection gets its own set; a derived registry keeps the interner.
        let only_file = a.filtered(&["file".to_owned()]).0;
        let c = b.filtered(&["file".to_owned()]).0;
        assert!(!Arc::ptr_eq(
            &only_file.shared_schemas(),
            &a.shared_schemas()
        ));
        assert!(Arc::ptr_eq(
            &only_file.shared_schemas(),
            &c.shared_schemas()
        ));
        // Without an interner every registry builds its own.
        let d = Registry::with_builtins();
        assert!(!Arc::ptr_eq(&d.shared_schemas(), &a.shared_schemas()));
        assert_eq!(*d.shared_schemas(), *a.shared_schemas());
    }

    #[test]
    fn generation_moves_on_change() {
        let mut reg = Registry::with_builtins();
        let g = reg.generation();
        assert!(reg.unregister("todo"));
        assert!(reg.generation() > g);
        assert!(!reg.unregister("todo"));
    }

    #[test]
    fn closest_repairs_typos_and_case() {
        let reg = Registry::with_builtins();
        assert_eq!(reg.closest("read_fiel"), Some("read_file"));
        assert_eq!(reg.closest("ReadFile"), Some("read_file"));
        assert_eq!(reg.closest("functions.terminal"), Some("terminal"));
        assert_eq!(reg.closest("termnal"), Some("terminal"));
        assert_eq!(reg.closest("launch_rockets"), None);
    }

    #[test]
    fn filtered_keeps_selected_toolsets() {
        let reg = Registry::with_builtins();
        let only_file = reg.filtered(&["file".to_owned()]).0;
        assert!(only_file.get("read_file").is_some());
        assert!(only_file.get("terminal").is_none());
    }
}
