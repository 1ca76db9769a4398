"""docs/python.md's OpenAI-SDK agent (examples/python/openai_agent.py) against a local server
speaking the Chat Completions wire format: the real SDK sends the 22 tools, gets a tool call,
the agent runs it on the mock network, sends the result back, and gets a final answer that is
judged correct; token usage from both responses lands in the record."""

from __future__ import annotations

import importlib.util
import json

import faultbench as fb
from conftest import MOCK, REPO, serve_chat_completions

FINAL = (
    "ospfd is not running on r1, so r1 no longer advertises pc1's LAN.\n"
    "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\n"
    "ospfd (the OSPF daemon) stopped on r1; fix: systemctl start frr on r1.\n=== END ==="
)


def completion(message: dict, prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def serve(requests: list):
    replies = [
        completion(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "frr_exec",
                            "arguments": json.dumps({"router_name": "r1", "command": "show ip ospf neighbor"}),
                        },
                    }
                ],
            },
            100,
            20,
        ),
        completion({"role": "assistant", "content": FINAL}, 150, 40),
    ]

    def reply(path: str, body: dict) -> dict:
        requests.append((path, body))
        return replies[min(len(requests), len(replies)) - 1]

    return serve_chat_completions(reply)


def test_readme_openai_agent_on_a_local_openai_server(duo_scenario):
    import openai

    spec = importlib.util.spec_from_file_location("openai_agent", REPO / "examples" / "python" / "openai_agent.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    requests: list = []
    server = serve(requests)
    try:
        client = openai.AsyncOpenAI(
            api_key="test-key", base_url=f"http://127.0.0.1:{server.server_port}/v1", max_retries=0
        )
        agent = example.GptAgent(model="scripted", client=client)
        rec = fb.run(duo_scenario, agent, emulator="mock", topologies=[MOCK])
    finally:
        server.shutdown()
    assert rec.status == "scored", rec.error
    assert rec.scores.correct and rec.diagnosis.faulty_devices == ["r1"]
    assert [p for p, _ in requests] == ["/v1/chat/completions"] * 2
    first, second = requests[0][1], requests[1][1]
    assert len(first["tools"]) == 22 and first["tools"][0]["type"] == "function"
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_1"
    assert "is not running" in tool_msg["content"]
    outcome = rec.to_dict()["phases"]["agent"]["outcome"]
    assert (outcome["usage"]["input_tokens"], outcome["usage"]["output_tokens"]) == (250, 60)
    assert outcome["model"] == "scripted"
    assert [c["tool"] for c in rec.tool_calls] == ["frr_exec"]
