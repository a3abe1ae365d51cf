//! Each policy's template, as the pool holds it: started, asked for its socket, retired after
//! `template_forks` jails or `template_max_age`, closed at shutdown.
//!
//! Owns: the pool's side of the template worker's protocol (`warden_worker::wire::TemplateJob`).
//! Does not own: the template itself (`warden_worker::template`, `jail/src/template.rs`).

use std::time::{Duration, Instant};

use super::*;
use crate::executor::WorkerProcess;

impl Pool {
    /// The socket of `policy`'s template, starting one (or a fresh one, when the current one has
    /// forked `template_forks` runs or is older than `template_max_age`) when needed. `None`: no
    /// template (off, or it could not start lately): the jail starts on its own.
    pub(super) async fn template_for(
        &self,
        service: &Service,
        policy: &str,
        registered: &RegisteredPolicy,
        lifetime: Duration,
    ) -> Option<std::path::PathBuf> {
        if !self.config.template || self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let mut templates = self.templates.lock().await;
        // A template whose worker is gone (its jail died) is replaced.
        let alive = match templates.get_mut(policy) {
            Some(TemplateSlot::Ready(template)) => matches!(template.child.try_wait(), Ok(None)),
            _ => false,
        };
        match templates.get_mut(policy) {
            Some(TemplateSlot::Ready(template))
                if alive
                    && template.forks < self.config.template_forks
                    && template.born.elapsed() < self.config.template_max_age =>
            {
                template.forks += 1;
                return Some(template.socket.clone());
            }
            Some(TemplateSlot::Failed { retry_at }) if Instant::now() < *retry_at => return None,
            _ => {}
        }
        if let Some(TemplateSlot::Ready(old)) = templates.remove(policy) {
            self.retire(*old, lifetime);
        }
        let bound = lifetime + self.config.template_max_age;
        match start_template(service, registered, bound).await {
            Ok(mut template) => {
                if let Ok(mut state) = self.state.lock() {
                    state.stats.entry(policy.to_owned()).or_default().templates += 1;
                }
                template.forks = 1;
                let socket = template.socket.clone();
                templates.insert(policy.to_owned(), TemplateSlot::Ready(Box::new(template)));
                Some(socket)
            }
            Err(err) => {
                eprintln!("warden: the template of policy {policy} could not start: {err:#}");
                templates.insert(
                    policy.to_owned(),
                    TemplateSlot::Failed {
                        retry_at: Instant::now() + BACKOFF * 6,
                    },
                );
                None
            }
        }
    }

    /// Ends a template's relay; its worker exits once every run forked from it has ended (at
    /// most `within` later, then it is killed).
    pub(super) fn retire(&self, template: Template, within: Duration) {
        let Template {
            mut child,
            stdin,
            dir,
            ..
        } = template;
        drop(stdin);
        let task = tokio::spawn(async move {
            if tokio::time::timeout(within, child.wait()).await.is_err() {
                let _ = child.kill().await;
            }
            drop(dir);
        });
        if let Ok(mut retiring) = self.retiring.lock() {
            retiring.retain(|task| !task.is_finished());
            retiring.push(task);
        }
    }

    /// Ends every template (shutdown, after the sessions): waits for their workers for up to
    /// `within`, then kills them (their jails, and anything forked from them, die with them).
    pub async fn close_templates(&self, within: Duration) {
        let templates: Vec<Template> = std::mem::take(&mut *self.templates.lock().await)
            .into_values()
            .filter_map(|slot| match slot {
                TemplateSlot::Ready(template) => Some(*template),
                TemplateSlot::Failed { .. } => None,
            })
            .collect();
        for template in templates {
            self.retire(template, within);
        }
        let tasks: Vec<_> = self
            .retiring
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default();
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// Starts `registered`'s template: a session worker in template mode, its jail, the preload.
pub(super) async fn start_template(
    service: &Service,
    registered: &RegisteredPolicy,
    lifetime: Duration,
) -> anyhow::Result<Template> {
    let job = wire::TemplateJob {
        template: pool_start(registered, lifetime, None, false),
    };
    let (mut worker, answer) = ask_new_worker(service, &job).await?;
    match serde_json::from_str::<wire::TemplateAnswer>(&answer) {
        Ok(wire::TemplateAnswer::Ready {
            socket,
            preload_failed,
        }) => {
            if !preload_failed.is_empty() {
                eprintln!(
                    "warden: a template could not preload: {}",
                    preload_failed.join("; ")
                );
            }
            // Its standard error is read to the end (and dropped) so that it never blocks.
            let WorkerProcess {
                child, stdin, dir, ..
            } = worker.process;
            Ok(Template {
                child,
                stdin,
                dir,
                socket,
                born: Instant::now(),
                forks: 0,
            })
        }
        Ok(wire::TemplateAnswer::Failed { message }) => {
            let _ = worker.process.child.kill().await;
            anyhow::bail!("{message}");
        }
        Err(_) => Err(worker.out_of_turn("template").await),
    }
}
