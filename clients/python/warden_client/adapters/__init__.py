"""Adapters that plug warden into agent frameworks. Each module imports its framework only when it
is imported itself, so the client works without any of them installed:

- `warden_client.adapters.smolagents`: `WardenExecutor`, for `CodeAgent(executor=...)`.
- `warden_client.adapters.autogen`: `WardenCodeExecutor`, for `CodeExecutorAgent(code_executor=...)`.
- `warden_client.adapters.langchain`: `WardenPythonTool`, a LangChain tool for any tool-calling agent.
"""
