"""The 22 tools' schemas are accepted by the OpenAI and Anthropic Python SDKs' own types
(installed from PyPI; nothing is sent anywhere): the request params validate against the SDKs'
TypedDicts, and their pydantic models build from them."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter

import faultbench as fb
from conftest import MOCK


@pytest.fixture(scope="module")
def tools():
    lab = fb.Lab.up(MOCK / "Duo", emulator="mock")
    lab.deploy()
    yield lab.tools()
    lab.teardown()


def test_openai_chat_completions_tool_params(tools):
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared import FunctionDefinition

    specs = tools.openai()
    assert len(specs) == 22
    adapter = TypeAdapter(list[ChatCompletionToolParam])
    validated = adapter.validate_python(specs)
    names = [getattr(t["function"], "name", None) or t["function"]["name"] for t in validated]
    assert names == tools.names
    for t in specs:
        model = FunctionDefinition.model_validate(t["function"])
        assert model.parameters["type"] == "object"
        assert set(model.parameters.get("required", [])) <= set(model.parameters["properties"])
        # Round-trips as the JSON a request body carries.
        assert json.loads(json.dumps(t)) == t


def test_openai_request_body_is_built_from_the_tools(tools):
    import openai

    client = openai.OpenAI(api_key="test-key", base_url="http://127.0.0.1:9/v1", max_retries=0)
    # Build the request the SDK would send, without sending it.
    from openai._models import FinalRequestOptions

    req = client._build_request(  # noqa: SLF001 - the SDK's own builder
        FinalRequestOptions.construct(
            method="post",
            url="/chat/completions",
            json_data={"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools.openai()},
        )
    )
    body = json.loads(req.content)
    assert [t["function"]["name"] for t in body["tools"]] == tools.names


def test_anthropic_tool_params_and_request(tools):
    import anthropic
    from anthropic.types import ToolParam
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    specs = tools.anthropic()
    validated = TypeAdapter(list[ToolParam]).validate_python(specs)
    assert [t["name"] for t in validated] == tools.names
    assert all(t["input_schema"]["type"] == "object" for t in validated)
    params = {
        "model": "m",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": specs,
    }
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(params)
    # The request the SDK would send, built without sending it.
    from anthropic._models import FinalRequestOptions

    client = anthropic.Anthropic(api_key="test-key", base_url="http://127.0.0.1:9", max_retries=0)
    req = client._build_request(  # noqa: SLF001 - the SDK's own builder
        FinalRequestOptions.construct(method="post", url="/v1/messages", json_data=params)
    )
    body = json.loads(req.content)
    assert [t["name"] for t in body["tools"]] == tools.names


def test_a_model_tool_call_runs_through_the_callable(tools):
    """What an agent loop does with a model's tool call: parse the JSON arguments, call."""
    from openai.types.chat import ChatCompletionMessageToolCall

    call = ChatCompletionMessageToolCall.model_validate(
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "frr_exec", "arguments": json.dumps({"router_name": "r1", "command": "show ip ospf neighbor"})},
        }
    )
    out = tools.call(call.function.name, json.loads(call.function.arguments))
    assert "Neighbor ID" in out
