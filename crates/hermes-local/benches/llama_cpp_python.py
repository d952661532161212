"""The same measurement as local_model.rs, with llama-cpp-python (an independent llama.cpp build).

usage: python llama_cpp_python.py GGUF [THREADS]
Prompts are rendered as ChatML, which is what SmolLM2's embedded template produces.
"""
import resource
import sys
import time

from llama_cpp import Llama

gguf = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
llm = Llama(model_path=gguf, n_ctx=8192, n_batch=8192, n_ubatch=512, n_threads=threads,
            n_threads_batch=threads, verbose=False)

PARA = ("You are Hermes, an agent that works in the user's terminal. You read files, run commands, "
        "and keep a task list. Prefer tools over guessing, keep answers short, and report what you did. ")


def chatml(system, user):
    return (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n")


def run(system, user, max_tokens):
    tokens = llm.tokenize(chatml(system, user).encode(), add_bos=False, special=True)
    llm.reset()
    start = time.perf_counter()
    llm.eval(tokens)
    prompt_secs = time.perf_counter() - start
    out = 0
    start = time.perf_counter()
    for tok in llm.generate(tokens, top_k=1, temp=0.0, reset=False):
        if tok == llm.token_eos() or out >= max_tokens:
            break
        out += 1
    return len(tokens), out, prompt_secs, time.perf_counter() - start


run("warm up", "Say hi.", 4)
best_prompt = best_gen = 0.0
for i in range(3):
    n, _, secs, _ = run(f"[{i}] " + PARA * 24, "Reply with one word.", 1)
    best_prompt = max(best_prompt, n / secs)
    _, out, _, gen_secs = run(f"[{i}] You are a storyteller.", "Write a long story about a lighthouse keeper.", 256)
    if out > 1:
        best_gen = max(best_gen, out / gen_secs)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"engine=llama-cpp-python threads={threads} prompt_tokens={n} prompt_tok_s={best_prompt:.1f} "
      f"gen_tokens={out} gen_tok_s={best_gen:.1f} peak_rss_mib={rss:.1f}")
