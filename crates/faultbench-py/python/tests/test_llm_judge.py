"""The built-in LLM judge called from Python (`fb.judge(..., "llm")`), against a local server
speaking the OpenAI Chat Completions wire format: three judgements (outcome axes, fix,
reasoning) combined by the release's rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import faultbench as fb
from conftest import serve_chat_completions


def verdict(body: dict) -> str:
    system = body["messages"][0]["content"]
    user = body["messages"][1]["content"]
    if "rubric items" in system:
        items = user.split("[RUBRIC-ITEMS]\n")[1]
        ids = [int(m.group(1)) for m in re.finditer(r"^(\d+)\. ", items, re.M)]
        return json.dumps({"axes": [{"id": i, "pass": True, "reason": "named"} for i in ids]})
    if "remedy" in system:
        return json.dumps({"score": 1, "reason": "same fix"})
    return json.dumps({"analysis": "ok", "grounding": 6, "causality": 6, "coverage": 6})


def test_llm_judge_over_the_openai_wire(duo_scenario, tmp_path: Path):
    seen = []

    def reply(_path: str, body: dict) -> dict:
        seen.append(body)
        return {
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": verdict(body)}}],
            "usage": {"prompt_tokens": 500, "completion_tokens": 50, "total_tokens": 550},
        }

    server = serve_chat_completions(reply)
    config = tmp_path / "llm.toml"
    config.write_text(
        f"""
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:{server.server_port}/v1"
api_key = "dummy"
stream = false

[models."judge-model"]
provider = "local"
"""
    )
    d = fb.Diagnosis(is_anomaly=True, faulty_devices=["r1"], text="ospfd stopped on r1; systemctl start frr on r1")
    try:
        s = fb.judge(duo_scenario, d, "llm", model="judge-model", llm_config=config)
    finally:
        server.shutdown()
    assert len(seen) == 3 and all(b["model"] == "judge-model" for b in seen)
    assert s.judge.startswith("llm"), s.judge
    assert s.outcome == 1.0 and s.fix == 1.0
    assert abs(s.reasoning - 18 / 30) < 1e-9
    assert s.to_dict()["usage"]["input_tokens"] == 1500
