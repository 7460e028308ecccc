"""The zoo's architectures: well-known torchvision and transformers models with random weights.

Runs in the zoo's own environment (`.venv-zoo`: CPU torch, torchvision, transformers; see
README.md beside this file), never in Kiln's. Each entry builds a `torch.nn.Module` in eval
mode and example inputs; nothing is downloaded (`weights=None`, transformers models from small
configs).

`prepare(model, inputs)` gives the weights the statistics of a trained net, so that outputs are
O(1) and a comparison means something: every Linear is redrawn N(0, 1/fan_in) and batch-norm
running statistics are calibrated on random inputs.
"""
import math
import sys
import types

import torch
from torch import nn

# The torchvision wheel on the package index is a CUDA build whose C extension does not load
# beside CPU torch. Its model definitions are plain Python; only the module that registers fake
# kernels for its C ops touches the extension at import, so it is stubbed out first.
sys.modules.setdefault("torchvision._meta_registrations",
                       types.ModuleType("torchvision._meta_registrations"))
import torchvision  # noqa: E402

SEED = 0


def _image(n=1, size=224, channels=3):
    return (torch.randn(n, channels, size, size),)


def _vision(name, size=224, **kwargs):
    def build():
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        return model, _image(1, size), _image(2, size)
    return build


def _segmentation(name, size=224):
    class Out(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = getattr(torchvision.models.segmentation, name)(
                weights=None, weights_backbone=None)

        def forward(self, x):
            return self.net(x)["out"]

    def build():
        return Out(), _image(1, size), _image(2, size)
    return build


def _video(name):
    def build():
        model = getattr(torchvision.models.video, name)(weights=None)
        clip = (torch.randn(1, 3, 8, 112, 112),)
        return model, clip, (torch.randn(2, 3, 8, 112, 112),)
    return build


class _FirstOutput(nn.Module):
    """A transformers model returning only its first output (hidden state or logits)."""

    def __init__(self, net, names):
        super().__init__()
        self.net, self.names = net, names

    def forward(self, *args):
        out = self.net(**dict(zip(self.names, args)), return_dict=True)
        return out[0] if not hasattr(out, "logits") else out.logits


def tokens(seq=32, mask=True, vocab=1000):
    """Token ids (1, seq) of a fixed seed, and an attention mask of ones when `mask`."""
    ids = torch.randint(0, vocab, (1, seq), generator=torch.Generator().manual_seed(SEED))
    return (ids, torch.ones(1, seq, dtype=torch.int64)) if mask else (ids,)


def _text(build_net, mask=True, seq=32):
    def build():
        import transformers
        net = build_net(transformers)
        names = ["input_ids", "attention_mask"] if mask else ["input_ids"]
        return _FirstOutput(net, names), tokens(seq, mask=mask), None
    return build


def _bert(t):
    return t.BertModel(t.BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                                    num_attention_heads=4, intermediate_size=512,
                                    max_position_embeddings=128), add_pooling_layer=False)


def _distilbert(t):
    return t.DistilBertModel(t.DistilBertConfig(vocab_size=1000, dim=128, n_layers=2, n_heads=4,
                                                hidden_dim=512, max_position_embeddings=128))


def _roberta(t):
    return t.RobertaModel(t.RobertaConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                                          num_attention_heads=4, intermediate_size=512,
                                          max_position_embeddings=130), add_pooling_layer=False)


def _t5_encoder(t):
    return t.T5EncoderModel(t.T5Config(vocab_size=1000, d_model=128, d_kv=32, d_ff=256,
                                       num_layers=2, num_heads=4))


def _gpt2(t):
    return t.GPT2LMHeadModel(t.GPT2Config(vocab_size=1000, n_embd=128, n_layer=2, n_head=4,
                                          n_positions=128, use_cache=False,
                                          bos_token_id=0, eos_token_id=0))


def _llama(t):
    return t.LlamaForCausalLM(t.LlamaConfig(vocab_size=1000, hidden_size=128,
                                            intermediate_size=256, num_hidden_layers=2,
                                            num_attention_heads=4, num_key_value_heads=2,
                                            max_position_embeddings=128, use_cache=False))


def _whisper_encoder():
    import transformers
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = WhisperEncoder(transformers.WhisperConfig(
                d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=256,
                num_mel_bins=80, max_source_positions=100))

        def forward(self, features):
            return self.net(features, return_dict=True).last_hidden_state

    return Encoder(), (torch.randn(1, 80, 200),), None


class _Recurrent(nn.Module):
    """A two-layer bidirectional LSTM or GRU over a sequence, then a linear head."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(32, 64, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


def _recurrent(cell):
    def build():
        return _Recurrent(cell), (torch.randn(1, 16, 32),), None
    return build


# name -> builder() -> (module, inputs, calibration inputs or None)
MODELS = {
    "resnet18": _vision("resnet18"),
    "resnet50": _vision("resnet50"),
    "resnext50_32x4d": _vision("resnext50_32x4d"),
    "wide_resnet50_2": _vision("wide_resnet50_2"),
    "vgg11_bn": _vision("vgg11_bn"),
    "alexnet": _vision("alexnet"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "mobilenet_v2": _vision("mobilenet_v2"),
    "mobilenet_v3_large": _vision("mobilenet_v3_large"),
    "mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "efficientnet_v2_s": _vision("efficientnet_v2_s"),
    "regnet_y_400mf": _vision("regnet_y_400mf"),
    "mnasnet1_0": _vision("mnasnet1_0"),
    "shufflenet_v2_x1_0": _vision("shufflenet_v2_x1_0"),
    "googlenet": _vision("googlenet", aux_logits=False, init_weights=True),
    "inception_v3": _vision("inception_v3", size=299, aux_logits=False, init_weights=True),
    "densenet121": _vision("densenet121"),
    "convnext_tiny": _vision("convnext_tiny"),
    "vit_b_16": _vision("vit_b_16"),
    "swin_t": _vision("swin_t"),
    "maxvit_t": _vision("maxvit_t"),
    "lraspp_mobilenet_v3_large": _segmentation("lraspp_mobilenet_v3_large"),
    "deeplabv3_mobilenet_v3_large": _segmentation("deeplabv3_mobilenet_v3_large"),
    "r3d_18": _video("r3d_18"),
    "bert": _text(_bert),
    "distilbert": _text(_distilbert),
    "roberta": _text(_roberta),
    "t5_encoder": _text(_t5_encoder),
    "whisper_encoder": _whisper_encoder,
    "gpt2": _text(_gpt2, mask=False),
    "llama": _text(_llama, mask=False),
    "lstm": _recurrent(nn.LSTM),
    "gru": _recurrent(nn.GRU),
}

# Text models exported with a symbolic sequence axis by `export.py --dynamic`.
DYNAMIC = ("bert", "gpt2")

# Models whose export needs the dynamo exporter (the TorchScript one fails on them).
DYNAMO_FIRST = {"gpt2", "llama"}


def input_names_of(name, count):
    """The ONNX input names of a zoo model with `count` inputs."""
    if name in {"bert", "distilbert", "roberta", "t5_encoder", "gpt2", "llama"}:
        return ["input_ids", "attention_mask"][:count]
    return ["features"] if name == "whisper_encoder" else ["x"][:count]


@torch.no_grad()
def prepare(model, calibration):
    """Gives random weights trained-like statistics; returns the model in eval mode."""
    torch.manual_seed(SEED)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 1.0 / math.sqrt(m.in_features))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if norms and calibration is not None:
        for m in norms:
            m.reset_running_stats()
            m.momentum = None            # a cumulative average over the calibration passes
        model.train()
        for _ in range(2):
            model(*calibration)
    return model.eval()
