"""A tool-calling agent on the OpenAI SDK, benchmarked on one topology (docs/python.md).

    OPENAI_API_KEY=… python examples/python/openai_agent.py      # as root: live netns labs
"""
import json, openai, faultbench as fb

class GptAgent:
    name = "gpt-loop"
    def __init__(self, model="gpt-5-mini", client=None):
        self.model, self.client = model, client or openai.AsyncOpenAI()
    async def run(self, input, tools):
        messages, usage = [{"role": "user", "content": input.prompt}], fb.Usage()
        for _ in range(input.max_turns):
            r = await self.client.chat.completions.create(model=self.model, messages=messages, tools=tools.openai())
            usage.input_tokens += r.usage.prompt_tokens; usage.output_tokens += r.usage.completion_tokens
            msg = r.choices[0].message
            if not msg.tool_calls:  # the final answer, ending with the === DIAGNOSIS === block
                return fb.Answer(msg.content or "", usage=usage, model=self.model)
            messages.append(msg.model_dump(exclude_none=True))
            for call in msg.tool_calls:
                try: out = await tools.acall(call.function.name, json.loads(call.function.arguments))
                except (fb.ToolError, ValueError) as e: out = f"error: {e}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
        return fb.Answer("", usage=usage, model=self.model)  # budget spent: a timeout

if __name__ == "__main__":
    res = fb.bench({"gpt-loop": GptAgent()}, scope="all", topology="Kath2", jobs=2, runs_root="runs/gpt-loop")
    print(res, res.report_html)
