//! The MCP server (`warden mcp`, stdio). Placeholder until the rmcp front end lands.

use std::sync::Arc;

use super::Service;

/// Serves MCP over standard input and output until the client closes them.
pub async fn serve_stdio(service: Arc<Service>) -> anyhow::Result<()> {
    let _ = service;
    anyhow::bail!("warden mcp is not built yet")
}
