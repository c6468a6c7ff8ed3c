"""Adapters that make a :class:`~boring_dispatch.Registry` the tool layer of an agent framework.

One module per framework, each an optional extra imported only when used:

- :mod:`boring_dispatch.adapters.pydantic_ai` (``[pydantic-ai]``):
  ``RegistryToolset``, a Pydantic AI toolset;
- :mod:`boring_dispatch.adapters.openai_agents` (``[openai-agents]``):
  ``function_tools``, the OpenAI Agents SDK's ``FunctionTool``s;
- :mod:`boring_dispatch.adapters.langchain` (``[langchain]``):
  ``structured_tools`` and, for LangGraph, ``approval_node``.

Every adapter obeys the same rules: the framework's tool calls go through
the table's dispatch (never around it: the same parse, look up, policy,
validation, redaction and audit); the model's argument text is parsed with
the strict parser (``dispatch_args_json``) wherever the framework hands it
over; observations reach the model as :meth:`Observation.model_text`;
``Injected`` arguments come from the caller's context, never from the model,
so a secret never enters the framework's message history or traces; and
``confirm=True`` tools use the framework's own approval, confirming only the
one call a person approved.
"""
