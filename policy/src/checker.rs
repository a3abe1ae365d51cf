//! The single walk over the AST and the one dispatch site that calls the rules.
//!
//! The checker owns traversal order, scopes, depth and node bounds, and turning rule verdicts into
//! located findings. The rules themselves (under `rules/`) decide what is wrong.

use std::collections::HashSet;

use ruff_text_size::{Ranged, TextRange};

use crate::finding::{Finding, Span};
use crate::parse::ast::visitor::{self, Visitor};
use crate::parse::ast::{self, Expr, Stmt};
use crate::rules::{self, Rule};
use crate::semantic::{QualName, ScopeId, ScopeKind, Semantic};
use crate::settings::Policy;

/// Maps byte offsets to 1-based lines and character columns.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, starts }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        (line, column)
    }

    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        let (line, column) = self.position(start);
        let (end_line, end_column) = self.position(end.max(start));
        Span {
            line,
            column,
            end_line,
            end_column,
            start_byte: start,
            end_byte: end,
        }
    }
}

pub(crate) struct Checker<'a> {
    pub(crate) policy: &'a Policy,
    pub(crate) semantic: Semantic<'a>,
    pub(crate) scope: ScopeId,
    lines: LineIndex<'a>,
    findings: Vec<Finding>,
    seen: HashSet<(Rule, usize, usize)>,
    /// Import paths already reported as not allowed: uses of them are not reported again.
    pub(crate) denied_imports: HashSet<String>,
    /// The range of the callee of the call being visited, to tell calls from other references.
    call_func: Option<TextRange>,
    depth: usize,
    nodes: usize,
    stopped: bool,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(policy: &'a Policy, text: &'a str) -> Self {
        Self {
            policy,
            semantic: Semantic::default(),
            scope: 0,
            lines: LineIndex::new(text),
            findings: Vec::new(),
            seen: HashSet::new(),
            denied_imports: HashSet::new(),
            call_func: None,
            depth: 0,
            nodes: 0,
            stopped: false,
        }
    }

    /// Walks a module and returns the findings in source order.
    pub(crate) fn run(mut self, module: &'a ast::ModModule) -> Vec<Finding> {
        self.scope = self.semantic.open(ScopeKind::Module, None, &module.body);
        self.visit_body(&module.body);
        self.finish()
    }

    pub(crate) fn finish(mut self) -> Vec<Finding> {
        self.findings.sort_by_key(|f| (f.span.start_byte, f.rule));
        self.findings
    }

    /// Records a finding unless the policy turned the rule off or it was already reported here.
    pub(crate) fn report(
        &mut self,
        rule: Rule,
        range: TextRange,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.report_bytes(
            rule,
            range.start().to_usize(),
            range.end().to_usize(),
            message,
            hint,
        );
    }

    pub(crate) fn report_bytes(
        &mut self,
        rule: Rule,
        start: usize,
        end: usize,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let Some(action) = self.policy.action_for(rule) else {
            return;
        };
        if !self.seen.insert((rule, start, end)) {
            return;
        }
        self.findings.push(Finding {
            rule,
            name: rule.name(),
            severity: rule.severity(),
            action,
            message: message.into(),
            hint: hint.into(),
            span: self.lines.span(start, end),
        });
    }

    pub(crate) fn in_class_scope(&self) -> bool {
        self.semantic.kind(self.scope) == Some(ScopeKind::Class)
    }

    pub(crate) fn resolve(&self, expr: &Expr) -> Vec<QualName> {
        self.semantic.resolve(expr, self.scope)
    }

    /// The string literals an expression may be, when it can only be literals.
    pub(crate) fn literal_strings(&self, expr: &Expr) -> Option<Vec<String>> {
        self.semantic
            .literal_strings(expr, self.scope)
            .map(|literals| literals.into_iter().map(str::to_owned).collect())
    }

    /// Checks every candidate a reference may resolve to.
    fn reference(&mut self, candidates: &[QualName], range: TextRange, is_call: bool) {
        for name in candidates {
            rules::attributes::dunder_attribute::check_reference(self, name, range);
            rules::imports::import_not_allowed::check_reference(self, name, range);
            rules::imports::reexported_module::check_reference(self, name, range);
            rules::attributes::private_attribute::check_reference(self, name, range);
            rules::references::banned_reference::check(self, name, range);
            rules::dynamic::dynamic_code::check(self, name, range);
            rules::dynamic::dynamic_import::check(self, name, range);
            rules::dynamic::reflection::check(self, name, range);
            rules::attributes::computed_attribute::check_value_use(self, name, range, is_call);
            rules::strings::string_sink::check_reference(self, name, range);
        }
    }

    /// Checks the names of an attribute chain and the chain as a reference; then walks its base.
    fn attribute_chain(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(outer) = expr {
            rules::attributes::dunder_attribute::check_store(self, outer);
        }
        let mut current = expr;
        while let Expr::Attribute(attribute) = current {
            rules::attributes::check_attribute_name(
                self,
                attribute.attr.id.as_str(),
                attribute.attr.range,
            );
            rules::references::banned_method::check(self, attribute);
            current = &attribute.value;
        }
        let is_call = self.call_func == Some(expr.range());
        let candidates = self.resolve(expr);
        self.reference(&candidates, expr.range(), is_call);
        match current {
            Expr::Name(name) => rules::attributes::dunder_attribute::check_name(self, name),
            base => self.visit_expr(base),
        }
    }

    fn call(&mut self, expr: &'a Expr, call: &'a ast::ExprCall) {
        let previous = self.call_func.replace(call.func.range());
        self.visit_expr(&call.func);
        self.call_func = previous;
        let callee = self.resolve(&call.func);
        if callee.iter().any(|q| q.path == "builtins.getattr") {
            // `getattr(pd.io.stata, "os")` is the reference `pandas.io.stata.os`.
            let candidates = self.resolve(expr);
            self.reference(&candidates, expr.range(), false);
        }
        rules::attributes::computed_attribute::check_call(self, call, &callee);
        rules::dynamic::class_hook::check_call(self, call, &callee);
        rules::references::banned_reference::check_call(self, call, &callee);
        rules::strings::string_sink::check_call(self, call);
        rules::files::check_call(self, call, &callee);
        self.visit_arguments(&call.arguments);
    }

    fn function(&mut self, def: &'a ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_decorator(decorator);
        }
        if let Some(type_params) = &def.type_params {
            self.visit_type_params(type_params);
        }
        self.visit_parameters(&def.parameters);
        if let Some(returns) = &def.returns {
            self.visit_annotation(returns);
        }
        if self.in_class_scope() {
            rules::attributes::dunder_attribute::check_definition(self, &def.name);
            rules::dynamic::class_hook::check_definition(self, &def.name);
        }
        let outer = self.scope;
        self.scope = self
            .semantic
            .open(ScopeKind::Function, Some(outer), &def.body);
        for parameter in def.parameters.iter() {
            self.semantic
                .bind_opaque(self.scope, parameter.name().id.as_str());
        }
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn class(&mut self, def: &'a ast::StmtClassDef) {
        for decorator in &def.decorator_list {
            self.visit_decorator(decorator);
        }
        if let Some(type_params) = &def.type_params {
            self.visit_type_params(type_params);
        }
        if let Some(arguments) = &def.arguments {
            rules::dynamic::class_hook::check_class_keywords(self, arguments);
            self.visit_arguments(arguments);
        }
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Class, Some(outer), &def.body);
        self.visit_body(&def.body);
        self.scope = outer;
    }

    fn lambda(&mut self, lambda: &'a ast::ExprLambda) {
        if let Some(parameters) = &lambda.parameters {
            self.visit_parameters(parameters);
        }
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Function, Some(outer), &[]);
        if let Some(parameters) = &lambda.parameters {
            for parameter in parameters.iter() {
                self.semantic
                    .bind_opaque(self.scope, parameter.name().id.as_str());
            }
        }
        self.visit_expr(&lambda.body);
        self.scope = outer;
    }

    fn comprehension(&mut self, generators: &'a [ast::Comprehension], parts: &[&'a Expr]) {
        let outer = self.scope;
        self.scope = self.semantic.open(ScopeKind::Function, Some(outer), &[]);
        for generator in generators {
            self.semantic.bind_target(self.scope, &generator.target);
        }
        for generator in generators {
            self.visit_comprehension(generator);
        }
        for part in parts {
            self.visit_expr(part);
        }
        self.scope = outer;
    }

    /// Counts a node and tracks depth; false when the walk must not descend.
    fn enter(&mut self, range: TextRange) -> bool {
        if self.stopped {
            return false;
        }
        self.nodes += 1;
        if self.nodes > self.policy.source.max_nodes {
            self.stopped = true;
            let limit = self.policy.source.max_nodes;
            self.report(
                Rule::SourceLimits,
                range,
                format!("program has more than {limit} syntax nodes"),
                "split the work into a smaller program",
            );
            return false;
        }
        if self.depth >= self.policy.source.max_depth {
            let limit = self.policy.source.max_depth;
            self.report(
                Rule::SourceLimits,
                range,
                format!("expressions or blocks nested deeper than {limit} levels"),
                "flatten the expression with intermediate variables",
            );
            return false;
        }
        self.depth += 1;
        true
    }
}

impl<'a> Visitor<'a> for Checker<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if !self.enter(stmt.range()) {
            return;
        }
        match stmt {
            Stmt::Import(import) => rules::imports::check_import(self, import),
            Stmt::ImportFrom(import) => rules::imports::check_import_from(self, import),
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::ClassDef(def) => self.class(def),
            _ => visitor::walk_stmt(self, stmt),
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if !self.enter(expr.range()) {
            return;
        }
        match expr {
            Expr::Name(name) => {
                rules::attributes::dunder_attribute::check_name(self, name);
                if name.ctx.is_load() {
                    let is_call = self.call_func == Some(name.range);
                    let candidates = self.resolve(expr);
                    self.reference(&candidates, name.range, is_call);
                }
            }
            Expr::Attribute(_) => self.attribute_chain(expr),
            Expr::Call(call) => self.call(expr, call),
            Expr::StringLiteral(literal) => {
                rules::attributes::check_string(self, literal.value.to_str(), literal.range);
            }
            Expr::FString(fstring) => {
                // Literal parts can be format templates too: `f"{{0.__mro__}}".format(x)`.
                for part in fstring.value.iter() {
                    match part {
                        ast::FStringPart::Literal(literal) => {
                            rules::attributes::check_string(self, &literal.value, literal.range);
                        }
                        ast::FStringPart::FString(f) => {
                            for element in f.elements.iter() {
                                if let ast::InterpolatedStringElement::Literal(literal) = element {
                                    rules::attributes::check_string(
                                        self,
                                        &literal.value,
                                        literal.range,
                                    );
                                }
                            }
                        }
                    }
                }
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(lambda) => self.lambda(lambda),
            Expr::ListComp(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::SetComp(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::Generator(comp) => self.comprehension(&comp.generators, &[&comp.elt]),
            Expr::DictComp(comp) => self.comprehension(&comp.generators, &[&comp.key, &comp.value]),
            _ => visitor::walk_expr(self, expr),
        }
        self.depth -= 1;
    }

    fn visit_pattern(&mut self, pattern: &'a ast::Pattern) {
        if !self.enter(pattern.range()) {
            return;
        }
        if let ast::Pattern::MatchClass(class) = pattern {
            for keyword in &class.arguments.keywords {
                rules::attributes::check_attribute_name(
                    self,
                    keyword.attr.id.as_str(),
                    keyword.attr.range,
                );
            }
        }
        visitor::walk_pattern(self, pattern);
        self.depth -= 1;
    }
}
