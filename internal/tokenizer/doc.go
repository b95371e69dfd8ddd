// Package tokenizer turns text into token IDs and back: OpenAI's BPE
// encodings (cl100k_base, o200k_base, embedded in the binary) and Hugging
// Face tokenizer.json files (BPE with byte-level or SentencePiece-style
// pre-tokenization, normalizers and added tokens). It is not a JavaScript
// module of its own: the data module synthesizes prompts with it, the llm
// module counts tokens with it and the simulator tokenizes with it, so it
// is a package of its own that depends on nothing else of llmrun.
package tokenizer
