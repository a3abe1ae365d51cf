//! Name resolution: which qualified name an expression refers to.
//!
//! Scopes follow Python's rules closely enough for a gate: module, class, function, lambda and
//! comprehension scopes; class scopes are skipped by nested functions; `global` redirects to the module.
//! Bindings are collected per scope before the scope is walked and are flow-insensitive: a name bound in
//! several places resolves to every value it may hold, so `f = print` followed by `f = os.system` still
//! resolves `f` to `os.system`. Unlike ruff, simple assignments (`s = os.system`) are followed.
//!
//! This module owns no policy: it answers "what could this be?", never "is it allowed?".

use std::collections::HashMap;

use crate::parse::ast::{self, Expr, Stmt};

/// Where a qualified name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Through an `import` or `from … import` of a module (the root is a module path).
    Import,
    /// A name that is not bound anywhere: a builtin (`builtins.<name>`).
    Builtin,
}

/// A resolved dotted name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualName {
    pub path: String,
    pub origin: Origin,
}

impl QualName {
    pub fn segments(&self) -> Vec<&str> {
        self.path.split('.').collect()
    }

    fn child(&self, attr: &str) -> QualName {
        QualName {
            path: format!("{}.{attr}", self.path),
            origin: self.origin,
        }
    }
}

#[derive(Debug, Clone)]
enum Binding<'a> {
    /// The name refers to this dotted path (an import, or a from-import member).
    Path(String),
    /// The name holds the value of this expression, evaluated in this scope.
    Value(&'a Expr, ScopeId),
    /// The name is the target of a loop or comprehension over this iterable, evaluated in this scope:
    /// it holds each element in turn (followed only when the iterable is a literal collection).
    Element(&'a Expr, ScopeId),
    /// Something the resolver does not follow (a def, a parameter, a loop variable…).
    Opaque,
}

pub type ScopeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Class,
    Function,
}

#[derive(Debug)]
struct Scope<'a> {
    kind: ScopeKind,
    parent: Option<ScopeId>,
    bindings: HashMap<&'a str, Vec<Binding<'a>>>,
    globals: Vec<&'a str>,
}

/// All scopes seen so far and the resolver over them.
#[derive(Debug, Default)]
pub struct Semantic<'a> {
    scopes: Vec<Scope<'a>>,
}

/// Upper bound on alias hops and candidates, so hostile alias webs cannot blow up resolution.
const MAX_HOPS: usize = 8;
const MAX_CANDIDATES: usize = 16;

impl<'a> Semantic<'a> {
    /// Opens a scope under `parent` and collects the bindings of `body` (not of nested scopes).
    pub fn open(&mut self, kind: ScopeKind, parent: Option<ScopeId>, body: &'a [Stmt]) -> ScopeId {
        let id = self.scopes.len();
        self.scopes.push(Scope {
            kind,
            parent,
            bindings: HashMap::new(),
            globals: Vec::new(),
        });
        let mut collector = Collector {
            semantic: self,
            scope: id,
        };
        collector.body(body);
        id
    }

    /// Binds a name opaquely (parameters, comprehension targets).
    pub fn bind_opaque(&mut self, scope: ScopeId, name: &'a str) {
        self.bind(scope, name, Binding::Opaque);
    }

    /// Binds a comprehension target: a plain name holds the elements of `iterable`, evaluated in
    /// `iterable_scope`; names in a tuple target are opaque.
    pub fn bind_iteration(
        &mut self,
        scope: ScopeId,
        target: &'a Expr,
        iterable: &'a Expr,
        iterable_scope: ScopeId,
    ) {
        Collector {
            semantic: self,
            scope,
        }
        .iteration(target, iterable, iterable_scope);
    }

    fn bind(&mut self, scope: ScopeId, name: &'a str, binding: Binding<'a>) {
        let scope = self.redirect(scope, name);
        if let Some(scope) = self.scopes.get_mut(scope) {
            scope.bindings.entry(name).or_default().push(binding);
        }
    }

    /// A `global` name binds in the module scope.
    fn redirect(&self, scope: ScopeId, name: &str) -> ScopeId {
        match self.scopes.get(scope) {
            Some(s) if s.globals.contains(&name) => 0,
            _ => scope,
        }
    }

    /// What `expr`, evaluated in `scope`, may refer to.
    pub fn resolve(&self, expr: &Expr, scope: ScopeId) -> Vec<QualName> {
        let mut out = Vec::new();
        self.resolve_into(expr, scope, 0, &mut out);
        out
    }

    fn resolve_into(&self, expr: &Expr, scope: ScopeId, hops: usize, out: &mut Vec<QualName>) {
        if hops > MAX_HOPS || out.len() >= MAX_CANDIDATES {
            return;
        }
        match expr {
            Expr::Name(name) => self.resolve_name(name.id.as_str(), scope, hops, out),
            Expr::Attribute(attribute) => {
                let mut inner = Vec::new();
                self.resolve_into(&attribute.value, scope, hops, &mut inner);
                for base in inner {
                    push_unique(out, base.child(attribute.attr.id.as_str()));
                }
            }
            Expr::Named(named) => self.resolve_into(&named.value, scope, hops + 1, out),
            Expr::Call(call) => {
                // getattr(x, "name") is x.name.
                let mut callee = Vec::new();
                self.resolve_into(&call.func, scope, hops, &mut callee);
                if callee.iter().any(|q| q.path == "builtins.getattr") {
                    if let (Some(base), Some(Expr::StringLiteral(name))) =
                        (call.arguments.args.first(), call.arguments.args.get(1))
                    {
                        let mut inner = Vec::new();
                        self.resolve_into(base, scope, hops + 1, &mut inner);
                        for base in inner {
                            push_unique(out, base.child(name.value.to_str()));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn resolve_name(&self, name: &str, scope: ScopeId, hops: usize, out: &mut Vec<QualName>) {
        let Some((_, bindings)) = self.lookup(name, scope) else {
            push_unique(
                out,
                QualName {
                    path: format!("builtins.{name}"),
                    origin: Origin::Builtin,
                },
            );
            return;
        };
        for binding in bindings {
            match binding {
                Binding::Path(path) => push_unique(
                    out,
                    QualName {
                        path: path.clone(),
                        origin: Origin::Import,
                    },
                ),
                Binding::Value(value, value_scope) => {
                    self.resolve_into(value, *value_scope, hops + 1, out);
                }
                Binding::Element(iterable, value_scope) => {
                    for element in literal_elements(iterable) {
                        self.resolve_into(element, *value_scope, hops + 1, out);
                    }
                }
                Binding::Opaque => {}
            }
        }
    }

    /// True when the name at the root of `expr` (a name or an attribute chain) is bound only by imports
    /// or not at all (a builtin): then [`Semantic::resolve`] knows every value it may have. A name also
    /// bound by a `def`, a class, a parameter or a loop may be something the resolver does not see.
    pub fn fully_resolved(&self, expr: &Expr, scope: ScopeId) -> bool {
        let mut root = expr;
        while let Expr::Attribute(attribute) = root {
            root = &attribute.value;
        }
        let Expr::Name(name) = root else {
            return false;
        };
        match self.lookup(name.id.as_str(), scope) {
            None => true,
            Some((_, bindings)) => bindings.iter().all(|b| matches!(b, Binding::Path(_))),
        }
    }

    /// What a bare name, evaluated in `scope`, may refer to (an `@name` of a pandas expression string).
    pub fn resolve_identifier(&self, name: &str, scope: ScopeId) -> Vec<QualName> {
        let mut out = Vec::new();
        self.resolve_name(name, scope, 0, &mut out);
        out
    }

    fn lookup(&self, name: &str, scope: ScopeId) -> Option<(ScopeId, &Vec<Binding<'a>>)> {
        let mut current = Some(scope);
        let mut first = true;
        while let Some(id) = current {
            let s = self.scopes.get(id)?;
            if s.globals.contains(&name) {
                return self.scopes.first()?.bindings.get(name).map(|b| (0, b));
            }
            // Nested functions do not see class-level names.
            if first || s.kind != ScopeKind::Class {
                if let Some(bindings) = s.bindings.get(name) {
                    return Some((id, bindings));
                }
            }
            first = false;
            current = s.parent;
        }
        None
    }

    /// The string literals a name may hold, when every binding it has is a string literal, or the
    /// target of a loop over string literals: `for name in ["mean", "std"]`, or over a name bound only
    /// to a tuple of them (a tuple cannot be changed later; a list can, so a list must be written in the
    /// loop itself).
    pub fn literal_strings<'e>(&'e self, expr: &'e Expr, scope: ScopeId) -> Option<Vec<&'e str>> {
        match expr {
            Expr::StringLiteral(literal) => Some(vec![literal.value.to_str()]),
            Expr::Name(name) => {
                let (_, bindings) = self.lookup(name.id.as_str(), scope)?;
                let mut out = Vec::new();
                for binding in bindings {
                    match binding {
                        Binding::Value(Expr::StringLiteral(literal), _) => {
                            out.push(literal.value.to_str())
                        }
                        Binding::Element(iterable, iterable_scope) => {
                            out.extend(self.iterated_strings(iterable, *iterable_scope)?);
                        }
                        _ => return None,
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            _ => None,
        }
    }

    /// The strings a loop over `iterable` yields, when they are all literals.
    fn iterated_strings<'e>(&'e self, iterable: &'e Expr, scope: ScopeId) -> Option<Vec<&'e str>> {
        let elements: Vec<&Expr> = match iterable {
            Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) => {
                literal_elements(iterable).iter().collect()
            }
            Expr::Name(name) => {
                let (_, bindings) = self.lookup(name.id.as_str(), scope)?;
                let mut elements = Vec::new();
                for binding in bindings {
                    match binding {
                        Binding::Value(tuple @ Expr::Tuple(_), _) => {
                            elements.extend(literal_elements(tuple))
                        }
                        _ => return None,
                    }
                }
                elements
            }
            _ => return None,
        };
        elements
            .iter()
            .map(|element| match element {
                Expr::StringLiteral(literal) => Some(literal.value.to_str()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|strings| !strings.is_empty())
    }
}

/// The elements of a list, tuple or set display without starred items; nothing for other
/// expressions.
fn literal_elements(iterable: &Expr) -> &[Expr] {
    let elements = match iterable {
        Expr::List(list) => &list.elts,
        Expr::Tuple(tuple) => &tuple.elts,
        Expr::Set(set) => &set.elts,
        _ => return &[],
    };
    if elements.iter().any(|e| matches!(e, Expr::Starred(_))) {
        return &[];
    }
    elements
}

fn push_unique(out: &mut Vec<QualName>, name: QualName) {
    if out.len() < MAX_CANDIDATES && !out.contains(&name) {
        out.push(name);
    }
}

/// Walks one scope's statements (not nested scopes) and records what each name is bound to.
struct Collector<'s, 'a> {
    semantic: &'s mut Semantic<'a>,
    scope: ScopeId,
}

impl<'a> Collector<'_, 'a> {
    fn bind(&mut self, name: &'a str, binding: Binding<'a>) {
        self.semantic.bind(self.scope, name, binding);
    }

    fn body(&mut self, body: &'a [Stmt]) {
        // `global` applies to the whole scope, wherever it is written.
        for stmt in body {
            self.globals(stmt);
        }
        for stmt in body {
            self.stmt(stmt);
        }
    }

    fn globals(&mut self, stmt: &'a Stmt) {
        if let Stmt::Global(global) = stmt {
            if let Some(scope) = self.semantic.scopes.get_mut(self.scope) {
                scope
                    .globals
                    .extend(global.names.iter().map(|n| n.id.as_str()));
            }
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let full = alias.name.id.as_str();
                    match &alias.asname {
                        Some(asname) => {
                            self.bind(asname.id.as_str(), Binding::Path(full.to_owned()))
                        }
                        None => {
                            let root = full.split('.').next().unwrap_or(full);
                            let root_name = &alias.name.id.as_str()[..root.len()];
                            self.bind(root_name, Binding::Path(root.to_owned()));
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |m| m.id.as_str());
                let prefix = ".".repeat(import.level as usize);
                for alias in &import.names {
                    if alias.name.id.as_str() == "*" {
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name).id.as_str();
                    let path = if module.is_empty() {
                        format!("{prefix}{}", alias.name.id)
                    } else {
                        format!("{prefix}{module}.{}", alias.name.id)
                    };
                    self.bind(bound, Binding::Path(path));
                }
            }
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    self.target(target, Some(&assign.value));
                }
            }
            Stmt::AnnAssign(assign) => self.target(&assign.target, assign.value.as_deref()),
            Stmt::AugAssign(assign) => self.target(&assign.target, None),
            Stmt::FunctionDef(def) => self.bind(def.name.id.as_str(), Binding::Opaque),
            Stmt::ClassDef(def) => self.bind(def.name.id.as_str(), Binding::Opaque),
            Stmt::TypeAlias(alias) => self.target(&alias.name, None),
            Stmt::For(for_) => {
                self.iteration(&for_.target, &for_.iter, self.scope);
                self.body(&for_.body);
                self.body(&for_.orelse);
            }
            Stmt::While(while_) => {
                self.body(&while_.body);
                self.body(&while_.orelse);
            }
            Stmt::If(if_) => {
                self.body(&if_.body);
                for clause in &if_.elif_else_clauses {
                    self.body(&clause.body);
                }
            }
            Stmt::With(with) => {
                for item in &with.items {
                    if let Some(target) = &item.optional_vars {
                        self.target(target, None);
                    }
                }
                self.body(&with.body);
            }
            Stmt::Try(try_) => {
                self.body(&try_.body);
                for handler in &try_.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    if let Some(name) = &handler.name {
                        self.bind(name.id.as_str(), Binding::Opaque);
                    }
                    self.body(&handler.body);
                }
                self.body(&try_.orelse);
                self.body(&try_.finalbody);
            }
            Stmt::Match(match_) => {
                for case in &match_.cases {
                    self.pattern(&case.pattern);
                    self.body(&case.body);
                }
            }
            _ => {}
        }
    }

    /// A loop target: a plain name holds each element of `iterable`; other targets are opaque.
    fn iteration(&mut self, target: &'a Expr, iterable: &'a Expr, iterable_scope: ScopeId) {
        match target {
            Expr::Name(name) => {
                self.bind(name.id.as_str(), Binding::Element(iterable, iterable_scope))
            }
            _ => self.target(target, None),
        }
    }

    fn target(&mut self, target: &'a Expr, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => {
                let binding = match value {
                    Some(value) => Binding::Value(value, self.scope),
                    None => Binding::Opaque,
                };
                self.bind(name.id.as_str(), binding);
            }
            Expr::Tuple(tuple) => {
                let values = match value {
                    Some(Expr::Tuple(values)) if values.elts.len() == tuple.elts.len() => {
                        Some(&values.elts)
                    }
                    _ => None,
                };
                for (index, element) in tuple.elts.iter().enumerate() {
                    self.target(element, values.and_then(|v| v.get(index)));
                }
            }
            Expr::List(list) => {
                for element in &list.elts {
                    self.target(element, None);
                }
            }
            Expr::Starred(starred) => self.target(&starred.value, None),
            _ => {}
        }
    }

    fn pattern(&mut self, pattern: &'a ast::Pattern) {
        use ast::Pattern;
        match pattern {
            Pattern::MatchAs(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.id.as_str(), Binding::Opaque);
                }
                if let Some(inner) = &p.pattern {
                    self.pattern(inner);
                }
            }
            Pattern::MatchStar(p) => {
                if let Some(name) = &p.name {
                    self.bind(name.id.as_str(), Binding::Opaque);
                }
            }
            Pattern::MatchMapping(p) => {
                for inner in &p.patterns {
                    self.pattern(inner);
                }
                if let Some(rest) = &p.rest {
                    self.bind(rest.id.as_str(), Binding::Opaque);
                }
            }
            Pattern::MatchSequence(p) => p.patterns.iter().for_each(|inner| self.pattern(inner)),
            Pattern::MatchOr(p) => p.patterns.iter().for_each(|inner| self.pattern(inner)),
            Pattern::MatchClass(p) => {
                p.arguments
                    .patterns
                    .iter()
                    .for_each(|inner| self.pattern(inner));
                p.arguments
                    .keywords
                    .iter()
                    .for_each(|keyword| self.pattern(&keyword.pattern));
            }
            Pattern::MatchValue(_) | Pattern::MatchSingleton(_) => {}
        }
    }
}

impl Semantic<'_> {
    /// The kind of a scope.
    pub fn kind(&self, scope: ScopeId) -> Option<ScopeKind> {
        self.scopes.get(scope).map(|s| s.kind)
    }
}
