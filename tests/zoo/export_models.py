#!/usr/bin/python3
"""Exports the model zoo: seeded, randomly initialized models as ONNX (opset 13, batch 1).

Usage: export_models.py OUT_DIR [--only NAME,...] [--force] [--show-ops] [--image-size N]
       export_models.py --list

For each model it writes OUT_DIR/<name>/model.onnx and OUT_DIR/<name>/inputs/<input>.npy
(the seeded input), plus OUT_DIR/<name>/torch/<output>.npy (torch's own outputs, for
reference). A model whose files already exist is skipped unless --force is given.
Run with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14, onnx 1.12).
"""

import argparse
import collections
import math
import os
import re
import shutil
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OPSET = 13
IMAGE_SIZE = 224
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPS_DEF = os.path.join(REPO_ROOT, "src", "ir", "ops.def")


class ExportError(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Models written here

class BertTiny(nn.Module):
    """A BERT-like encoder: token + position embedding, LayerNorm, post-norm layers of
    self-attention and a GELU MLP; returns the hidden states and a tanh pooler output."""

    def __init__(self, vocab=1000, seq=64, d=128, heads=2, ff=512, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.embed_norm = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        self.pooler = nn.Linear(d, d)

    def forward(self, input_ids):
        x = self.tokens(input_ids) + self.positions[: input_ids.shape[1]]
        x = self.embed_norm(x)
        for layer in self.layers:
            x = layer(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class BertLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.head_dim = d // heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.ff_in = nn.Linear(d, ff)
        self.ff_out = nn.Linear(ff, d)
        self.ff_norm = nn.LayerNorm(d, eps=1e-12)

    def split_heads(self, x):
        b, t, _ = x.shape
        return x.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, t, d = x.shape
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.transpose(1, 2).reshape(b, t, d)
        x = self.attn_norm(x + self.attn_out(context))
        return self.ff_norm(x + self.ff_out(gelu_erf(self.ff_in(x))))


class ResBlock(nn.Module):
    """GroupNorm + SiLU + Conv, twice, with a 1x1 conv on the skip when channels change."""

    def __init__(self, cin, cout, groups=8):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttentionBlock(nn.Module):
    """Multi-head self-attention over the spatial positions, heads split by Reshape and
    Transpose as in the text-to-image UNets."""

    def __init__(self, channels, heads=4, groups=8):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(groups, channels)
        self.qkv = nn.Conv2d(channels, 3 * channels, 1)
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        head_dim = c // self.heads
        qkv = self.qkv(self.norm(x)).reshape(b, 3, self.heads, head_dim, h * w)
        q = qkv[:, 0].transpose(2, 3)  # b, heads, hw, head_dim
        k = qkv[:, 1]                  # b, heads, head_dim, hw
        v = qkv[:, 2].transpose(2, 3)
        weights = torch.softmax(torch.matmul(q, k) / math.sqrt(head_dim), dim=-1)
        out = torch.matmul(weights, v).transpose(2, 3).reshape(b, c, h, w)
        return x + self.proj(out)


class UNetSmall(nn.Module):
    def __init__(self, cin=3, base=32):
        super().__init__()
        c1, c2 = base, 2 * base
        self.conv_in = nn.Conv2d(cin, c1, 3, padding=1)
        self.down1 = ResBlock(c1, c1)
        self.pool1 = nn.Conv2d(c1, c1, 3, stride=2, padding=1)
        self.down2 = ResBlock(c1, c2)
        self.pool2 = nn.Conv2d(c2, c2, 3, stride=2, padding=1)
        self.mid1 = ResBlock(c2, c2)
        self.mid_attn = AttentionBlock(c2)
        self.mid2 = ResBlock(c2, c2)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = ResBlock(c2 + c2, c2)
        self.up1 = ResBlock(c2 + c1, c1)
        self.norm_out = nn.GroupNorm(8, c1)
        self.conv_out = nn.Conv2d(c1, cin, 3, padding=1)

    def forward(self, x):
        h0 = self.conv_in(x)               # 64x64
        h1 = self.down1(h0)                # 64x64
        h2 = self.down2(self.pool1(h1))    # 32x32
        h = self.mid1(self.pool2(h2))      # 16x16
        h = self.mid2(self.mid_attn(h))
        h = self.up2(torch.cat([self.upsample(h), h2], dim=1))   # 32x32
        h = self.up1(torch.cat([F.interpolate(h, scale_factor=2.0, mode="nearest"), h1], 1))
        return self.conv_out(F.silu(self.norm_out(h)))


class TimeResBlock(nn.Module):
    """A ResBlock of the diffusion UNets: GroupNorm, SiLU, Conv, plus the time embedding
    projected to the channels and added per channel, then GroupNorm, SiLU, Conv."""

    def __init__(self, cin, cout, temb, groups=8):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(t))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class CrossAttention(nn.Module):
    """Multi-head attention of tokens x over `context` (x itself for self-attention), the
    heads split and merged by reshape and transpose."""

    def __init__(self, dim, context_dim, heads=4):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(context_dim, dim, bias=False)
        self.v = nn.Linear(context_dim, dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, context):
        b, n, d = x.shape
        hd = d // self.heads
        q = self.q(x).reshape(b, n, self.heads, hd).transpose(1, 2)
        k = self.k(context).reshape(b, -1, self.heads, hd).transpose(1, 2)
        v = self.v(context).reshape(b, -1, self.heads, hd).transpose(1, 2)
        w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd), dim=-1)
        return self.out(torch.matmul(w, v).transpose(1, 2).reshape(b, n, d))


class SpatialTransformer(nn.Module):
    """GroupNorm and a 1x1 projection, the pixels as tokens, LayerNorm + self-attention,
    LayerNorm + cross-attention to the text context, LayerNorm + GEGLU feed-forward, back to
    an image and a 1x1 projection, with residuals."""

    def __init__(self, channels, context_dim, heads=4, groups=8):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.proj_in = nn.Conv2d(channels, channels, 1)
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(channels) for _ in range(3))
        self.self_attn = CrossAttention(channels, channels, heads)
        self.cross_attn = CrossAttention(channels, context_dim, heads)
        self.ff_in = nn.Linear(channels, 8 * channels)
        self.ff_out = nn.Linear(4 * channels, channels)
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, x, context):
        b, c, h, w = x.shape
        t = self.proj_in(self.norm(x)).reshape(b, c, h * w).transpose(1, 2)
        n = self.ln1(t)
        t = t + self.self_attn(n, n)
        t = t + self.cross_attn(self.ln2(t), context)
        a, g = self.ff_in(self.ln3(t)).chunk(2, dim=-1)
        t = t + self.ff_out(a * F.gelu(g))
        return x + self.proj_out(t.transpose(1, 2).reshape(b, c, h, w))


class SdUNet(nn.Module):
    """A small Stable-Diffusion-style denoising UNet: latent [1, 4, 32, 32] and text context
    [1, 8, 64] in, the predicted noise out; a fixed timestep's sinusoidal embedding through
    an MLP feeds every ResBlock; strided-conv downsampling, nearest upsampling, skip Concats."""

    def __init__(self, cin=4, base=32, context_dim=64, timestep=500):
        super().__init__()
        c1, c2, temb = base, 2 * base, 4 * base
        half = base // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        angles = timestep * freqs
        self.register_buffer("t_freq", torch.cat([angles.sin(), angles.cos()])[None, :])
        self.t_mlp1 = nn.Linear(base, temb)
        self.t_mlp2 = nn.Linear(temb, temb)
        self.conv_in = nn.Conv2d(cin, c1, 3, padding=1)
        self.down1 = TimeResBlock(c1, c1, temb)
        self.pool1 = nn.Conv2d(c1, c1, 3, stride=2, padding=1)
        self.down2 = TimeResBlock(c1, c2, temb)
        self.attn2 = SpatialTransformer(c2, context_dim)
        self.pool2 = nn.Conv2d(c2, c2, 3, stride=2, padding=1)
        self.mid1 = TimeResBlock(c2, c2, temb)
        self.mid_attn = SpatialTransformer(c2, context_dim)
        self.mid2 = TimeResBlock(c2, c2, temb)
        self.up2 = TimeResBlock(c2 + c2, c2, temb)
        self.up2_attn = SpatialTransformer(c2, context_dim)
        self.up2_conv = nn.Conv2d(c2, c2, 3, padding=1)
        self.up1 = TimeResBlock(c2 + c1, c1, temb)
        self.up1_conv = nn.Conv2d(c2, c2, 3, padding=1)
        self.norm_out = nn.GroupNorm(8, c1)
        self.conv_out = nn.Conv2d(c1, cin, 3, padding=1)

    def forward(self, latent, context):
        t = self.t_mlp2(F.silu(self.t_mlp1(self.t_freq)))
        h1 = self.down1(self.conv_in(latent), t)                          # 32x32
        h2 = self.attn2(self.down2(self.pool1(h1), t), context)           # 16x16
        h = self.mid1(self.pool2(h2), t)                                  # 8x8
        h = self.mid2(self.mid_attn(h, context), t)
        h = self.up2_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up2_attn(self.up2(torch.cat([h, h2], 1), t), context)    # 16x16
        h = self.up1_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up1(torch.cat([h, h1], 1), t)                            # 32x32
        return self.conv_out(F.silu(self.norm_out(h)))


class TransformerModel(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                           dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class SpeechLstm(nn.Module):
    """A keyword spotter: 40 log-mel features per frame, a strided Conv1d + BatchNorm + ReLU
    front end, a bidirectional LSTM and a GRU over the frames, and a linear classifier on the
    last frame."""

    def __init__(self, features=40, channels=64, hidden=64, classes=12):
        super().__init__()
        self.front = nn.Sequential(nn.Conv1d(features, channels, 5, stride=2, padding=2),
                                   nn.BatchNorm1d(channels), nn.ReLU())
        self.lstm = nn.LSTM(channels, hidden, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.classify = nn.Linear(hidden, classes)

    def forward(self, mel):
        x = self.front(mel).transpose(1, 2)  # [batch, frames, channels]
        x, _ = self.lstm(x)
        x, h = self.gru(x)
        return self.classify(x[:, -1]), h


class KwsTcResnet(nn.Module):
    """A TC-ResNet-style keyword spotter: the 40 log-mel coefficients of [1, 40, 101] as
    channels, 1-d convolutions over the frames: a k3 stem, three residual blocks (conv k9
    stride 2 + BN + ReLU, conv k9 + BN, a 1x1 stride-2 conv + BN shortcut, add, ReLU), a
    depthwise-separable block, a max pool, an average pool (k3), a global average pool and a
    linear classifier over 12 keywords."""

    def __init__(self, features=40, widths=(24, 32, 48, 64), classes=12):
        super().__init__()
        self.stem = nn.Conv1d(features, widths[0], 3, padding=1, bias=False)
        self.blocks = nn.ModuleList()
        for cin, cout in zip(widths[:-1], widths[1:]):
            self.blocks.append(nn.ModuleDict(dict(
                body=nn.Sequential(nn.Conv1d(cin, cout, 9, stride=2, padding=4, bias=False),
                                   nn.BatchNorm1d(cout), nn.ReLU(),
                                   nn.Conv1d(cout, cout, 9, padding=4, bias=False), nn.BatchNorm1d(cout)),
                shortcut=nn.Sequential(nn.Conv1d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm1d(cout)))))
        c = widths[-1]
        self.separable = nn.Sequential(
            nn.Conv1d(c, c, 9, padding=4, groups=c, bias=False), nn.BatchNorm1d(c), nn.ReLU(),
            nn.Conv1d(c, c, 1, bias=False), nn.BatchNorm1d(c), nn.ReLU())
        # count_include_pad=False: torch exports the padded average pool as one AveragePool
        # (with the default it adds a Pad in front).
        self.pools = nn.Sequential(
            nn.MaxPool1d(2), nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False),
            nn.AdaptiveAvgPool1d(1))
        self.classify = nn.Linear(c, classes)

    def forward(self, mel):
        x = self.stem(mel)
        for b in self.blocks:
            x = torch.relu(b["body"](x) + b["shortcut"](x))
        x = self.pools(self.separable(x))
        return self.classify(torch.flatten(x, 1))


class DetectorNms(nn.Module):
    """A one-class detector head on a small conv backbone: per cell a box (centre offset and
    log size) and a score, decoded to corners, then NonMaxSuppression keeps the boxes that
    overlap less than IoU 0.5; returns the kept boxes, their scores and indices."""

    def __init__(self, width=32):
        super().__init__()
        layers, cin = [], 3
        for cout in (width, 2 * width, 2 * width, 4 * width):
            layers += [nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout),
                       nn.Hardswish()]
            cin = cout
        self.backbone = nn.Sequential(*layers)
        self.head = nn.Conv2d(cin, 5, 1)

    def forward(self, image):
        out = self.head(self.backbone(image))        # [1, 5, h, w]
        _, _, h, w = out.shape
        out = out.flatten(2).transpose(1, 2)[0]      # [h*w, 5]
        ys = torch.arange(h, dtype=torch.float32).repeat_interleave(w)
        xs = torch.arange(w, dtype=torch.float32).repeat(h)
        cx = (xs + torch.sigmoid(out[:, 0])) * 16
        cy = (ys + torch.sigmoid(out[:, 1])) * 16
        bw = torch.exp(out[:, 2].clamp(-2, 2)) * 56
        bh = torch.exp(out[:, 3].clamp(-2, 2)) * 56
        boxes = torch.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], dim=1)
        scores = torch.sigmoid(out[:, 4])
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        return boxes[keep], scores[keep], keep


class RefineLoop(nn.Module):
    """Control flow from TorchScript: a small conv encoder, then a recurrent refinement of a
    state vector for a number of iterations computed from the features (1 to `steps`: a Loop
    with a data-dependent trip count), and a head chosen by the sign of the mean feature (an
    If on a value computed from the input). Exported from torch.jit.script, so the loop and
    the branch stay in the graph."""

    def __init__(self, width=16, hidden=32, classes=10, steps=6):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, width, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(width, 2 * width, 3, stride=2, padding=1))
        self.wx = nn.Linear(2 * width, hidden)
        self.wh = nn.Linear(hidden, hidden)
        self.head_pos = nn.Linear(hidden, classes)
        self.head_neg = nn.Linear(hidden, classes)
        self.steps = steps
        self.hidden = hidden

    def forward(self, image):
        f = self.encoder(image).mean(dim=(2, 3))          # [1, 2·width]
        h = torch.zeros(f.shape[0], self.hidden)
        trips = int(torch.clamp(f.abs().mean() * 40.0, 1.0, float(self.steps)).to(torch.int64))
        for _ in range(trips):
            h = torch.tanh(self.wx(f) + self.wh(h))
        if bool(f.mean() > 0):
            out = self.head_pos(h)
        else:
            out = self.head_neg(h) * 2.0
        return out, h


class Mnv3FpnDb(nn.Module):
    """A DB-style text detector: torchvision's MobileNetV3-large features at strides 4, 8,
    16 and 32, an FPN (1x1 laterals, nearest 2x upsampling added top-down, 3x3 smoothing
    convs, every level upsampled to stride 4 and concatenated) and a DB probability head
    (3x3 conv + BatchNorm + ReLU, two 2x2 stride-2 ConvTransposes, the first followed by
    BatchNorm + ReLU, then a sigmoid): image [1, 3, H, W] in, probability map [1, 1, H, W]."""

    def __init__(self, inner=96):
        super().__init__()
        features = torchvision.models.mobilenet_v3_large(weights=None).features
        self.stages = nn.ModuleList([features[:4], features[4:7], features[7:13],
                                     features[13:]])
        self.laterals = nn.ModuleList(nn.Conv2d(c, inner, 1, bias=False)
                                      for c in (24, 40, 112, 960))
        self.smooth = nn.ModuleList(nn.Conv2d(inner, inner // 4, 3, padding=1, bias=False)
                                    for _ in range(4))
        quarter = inner // 4
        self.head = nn.Sequential(
            nn.Conv2d(inner, quarter, 3, padding=1, bias=False), nn.BatchNorm2d(quarter),
            nn.ReLU(), nn.ConvTranspose2d(quarter, quarter, 2, stride=2),
            nn.BatchNorm2d(quarter), nn.ReLU(), nn.ConvTranspose2d(quarter, 1, 2, stride=2))

    def forward(self, image):
        levels, x = [], image
        for stage in self.stages:
            x = stage(x)
            levels.append(x)
        inner = [lateral(c) for lateral, c in zip(self.laterals, levels)]
        for i in (2, 1, 0):  # top-down: each level plus the coarser one upsampled
            inner[i] = inner[i] + F.interpolate(inner[i + 1], scale_factor=2.0, mode="nearest")
        outs = [conv(p) for conv, p in zip(self.smooth, inner)]
        fused = torch.cat([F.interpolate(outs[3], scale_factor=8.0, mode="nearest"),
                           F.interpolate(outs[2], scale_factor=4.0, mode="nearest"),
                           F.interpolate(outs[1], scale_factor=2.0, mode="nearest"),
                           outs[0]], dim=1)
        return torch.sigmoid(self.head(fused))


class LrasppMnv3(nn.Module):
    """torchvision's lraspp_mobilenet_v3_large (21 classes, random weights): a MobileNetV3
    backbone whose last stage runs dilated (dilation 2) depthwise convolutions at output
    stride 16, and the LR-ASPP head (a pooled sigmoid gate, a low-level classifier, bilinear
    resizes). torchvision returns a dict; the export takes its "out"."""

    def __init__(self):
        super().__init__()
        self.net = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=21)

    def forward(self, image):
        return self.net(image)["out"]


class TfSamePad(nn.Module):
    """A MobileNet-v1 as TensorFlow converters write it: every 3x3 conv has padding 0 and an
    explicit Pad before it, TF's "same" (one row and column more at the end at stride 2,
    one on every side at stride 1), depthwise then pointwise, ReLU6, average pool, classifier."""

    def __init__(self, widths=(16, 32, 64, 64, 128), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2), nn.BatchNorm2d(widths[0]), nn.ReLU6())
        blocks = []
        for i, (cin, cout) in enumerate(zip(widths, widths[1:])):
            stride = 2 if i % 2 == 0 else 1
            blocks.append(nn.ModuleList([
                nn.Sequential(nn.Conv2d(cin, cin, 3, stride, groups=cin), nn.BatchNorm2d(cin), nn.ReLU6()),
                nn.Sequential(nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout), nn.ReLU6())]))
        self.blocks = nn.ModuleList(blocks)
        self.head = nn.Linear(widths[-1], classes)

    @staticmethod
    def same(x, stride):
        return nn.functional.pad(x, (0, 1, 0, 1) if stride == 2 else (1, 1, 1, 1))

    def forward(self, x):
        x = self.stem(self.same(x, 2))
        for dw, pw in self.blocks:
            x = pw(dw(self.same(x, dw[0].stride[0])))
        return self.head(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


class PoolBranches(nn.Module):
    """Average pools as small CNNs use them: an inception block's pool branch (3x3 stride 1
    pad 1, the padding left out of the divisor) beside 1x1 and 3x3 convolutions, a DenseNet
    transition (1x1 conv, 2x2 stride 2 pool) and a ceil_mode 3x3 stride 2 pool whose last
    windows reach past the input. (torch exports a pool that counts its padding as Pad +
    AveragePool, and Pad has neither a fast CPU kernel nor a fold into the pool yet: the
    unit tests cover count_include_pad = 1 instead.)"""

    def __init__(self, width=16, classes=10):
        super().__init__()
        w = width
        self.stem = nn.Sequential(nn.Conv2d(3, w, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(w), nn.ReLU())
        self.b1 = nn.Conv2d(w, w // 2, 1)
        self.b3 = nn.Sequential(nn.Conv2d(w, w // 2, 3, padding=1), nn.ReLU())
        self.bp = nn.Sequential(nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
                                nn.Conv2d(w, w // 2, 1), nn.ReLU())
        self.transition = nn.Sequential(nn.BatchNorm2d(3 * w // 2), nn.ReLU(),
                                        nn.Conv2d(3 * w // 2, w, 1, bias=False),
                                        nn.AvgPool2d(2, stride=2))
        self.ceil_pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.conv = nn.Sequential(nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(2 * w, classes)

    def forward(self, x):
        x = self.stem(x)                                                   # 32x32
        x = torch.cat([F.relu(self.b1(x)), self.b3(x), self.bp(x)], dim=1)
        x = self.ceil_pool(self.transition(x))                             # 16x16, then 9x9
        x = self.conv(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---------------------------------------------------------------------------------------
# The zoo

class ConvBnSilu(nn.Module):
    """Conv + BatchNorm + SiLU, the unit of the YOLO family."""

    def __init__(self, cin, cout, k=1, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class C2f(nn.Module):
    """YOLOv8's C2f block: a 1x1 conv split in two halves (Split), bottlenecks on the second
    half (with a residual Add), every piece concatenated, a 1x1 conv."""

    def __init__(self, cin, cout, n=1):
        super().__init__()
        self.c = cout // 2
        self.cv1 = ConvBnSilu(cin, 2 * self.c, 1)
        self.m = nn.ModuleList(nn.Sequential(ConvBnSilu(self.c, self.c, 3), ConvBnSilu(self.c, self.c, 3))
                               for _ in range(n))
        self.cv2 = ConvBnSilu((2 + n) * self.c, cout, 1)

    def forward(self, x):
        y = list(self.cv1(x).split(self.c, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class YoloSmall(nn.Module):
    """A YOLOv8-style detector at 128x128: C2f blocks, an SPPF (three 5x5 stride-1 max pools,
    concatenated), a nearest-upsample + concat neck, and per level a box head whose DFL takes
    a softmax over 16 bins on a non-last axis followed by a fixed 1x1 conv (the bin index as
    weights), and sigmoid class scores. Returns the box distances [1, 4, anchors] and the
    class scores [1, 8, anchors] over both levels (stride 8 and 16)."""

    def __init__(self, classes=8, bins=16):
        super().__init__()
        self.bins = bins
        self.stem = nn.Sequential(ConvBnSilu(3, 16, 3, 2), ConvBnSilu(16, 32, 3, 2), C2f(32, 32),
                                  ConvBnSilu(32, 64, 3, 2), C2f(64, 64))                   # P3, stride 8
        self.down = nn.Sequential(ConvBnSilu(64, 96, 3, 2), C2f(96, 96))                   # P4, stride 16
        self.sppf_cv1 = ConvBnSilu(96, 48, 1)
        self.sppf_cv2 = ConvBnSilu(4 * 48, 96, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.neck = C2f(96 + 64, 64)
        self.box = nn.ModuleList(nn.Sequential(ConvBnSilu(c, 32, 3), nn.Conv2d(32, 4 * bins, 1)) for c in (64, 96))
        self.cls = nn.ModuleList(nn.Sequential(ConvBnSilu(c, 32, 3), nn.Conv2d(32, classes, 1)) for c in (64, 96))
        self.dfl = nn.Conv2d(bins, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(bins, dtype=torch.float32).view(1, bins, 1, 1)

    def sppf(self, x):
        x = self.sppf_cv1(x)
        p1 = F.max_pool2d(x, 5, 1, 2)
        p2 = F.max_pool2d(p1, 5, 1, 2)
        p3 = F.max_pool2d(p2, 5, 1, 2)
        return self.sppf_cv2(torch.cat([x, p1, p2, p3], 1))

    def forward(self, image):
        p3 = self.stem(image)
        p4 = self.sppf(self.down(p3))
        n3 = self.neck(torch.cat([self.up(p4), p3], 1))
        boxes, scores = [], []
        for level, feat in enumerate((n3, p4)):
            box = self.box[level](feat)                                  # [n, 64, h, w]
            n, a = box.shape[0], box.shape[2] * box.shape[3]
            dist = box.view(n, 4, self.bins, a).transpose(2, 1).softmax(1)  # bins on axis 1
            boxes.append(self.dfl(dist).view(n, 4, a))
            scores.append(self.cls[level](feat).sigmoid().flatten(2))
        return torch.cat(boxes, 2), torch.cat(scores, 2)


def image_input(rng):
    return {"input": rng.standard_normal((1, 3, IMAGE_SIZE, IMAGE_SIZE)).astype(np.float32)}


def torchvision_spec(name, **kwargs):
    return dict(build=lambda: getattr(torchvision.models, name)(weights=None, **kwargs),
                inputs=image_input, outputs=["output"], recalibrate=True,
                input_shape=(3, IMAGE_SIZE, IMAGE_SIZE))


MODELS = collections.OrderedDict()
MODELS["resnet18"] = torchvision_spec("resnet18")
MODELS["resnet18_bn"] = dict(torchvision_spec("resnet18"), keep_batchnorm=True)
MODELS["mobilenet_v2"] = torchvision_spec("mobilenet_v2")
MODELS["mobilenet_v3_small"] = torchvision_spec("mobilenet_v3_small")
MODELS["squeezenet1_1"] = torchvision_spec("squeezenet1_1")
MODELS["shufflenet_v2_x1_0"] = torchvision_spec("shufflenet_v2_x1_0")
MODELS["efficientnet_b0"] = torchvision_spec("efficientnet_b0")
# Grouped 3x3 convs (groups of 16 channels) in every block: the NPU's grouped conv mapping.
MODELS["regnet_x_400mf"] = torchvision_spec("regnet_x_400mf")
MODELS["pool_branches"] = dict(
    build=PoolBranches,
    inputs=lambda rng: {"input": rng.standard_normal((1, 3, 64, 64)).astype(np.float32)},
    outputs=["output"], recalibrate=True, input_shape=(3, 64, 64), expect_ops=("AveragePool",))
MODELS["transformer"] = dict(
    build=TransformerModel,
    inputs=lambda rng: {"input": rng.standard_normal((1, 128, 256)).astype(np.float32)},
    outputs=["output"], plain_transformer_path=True)
MODELS["bert_tiny"] = dict(
    build=BertTiny,
    inputs=lambda rng: {"input_ids": rng.integers(0, 1000, size=(1, 64), dtype=np.int64)},
    outputs=["last_hidden_state", "pooler_output"])
MODELS["unet_small"] = dict(
    build=UNetSmall,
    inputs=lambda rng: {"input": rng.standard_normal((1, 3, 64, 64)).astype(np.float32)},
    outputs=["output"], recalibrate=False)

MODELS["sd_unet"] = dict(
    build=SdUNet,
    inputs=lambda rng: {"latent": rng.standard_normal((1, 4, 32, 32)).astype(np.float32),
                        "context": rng.standard_normal((1, 8, 64)).astype(np.float32)},
    outputs=["noise"], recalibrate=False)

MODELS["speech_lstm"] = dict(
    build=SpeechLstm,
    inputs=lambda rng: {"mel": rng.standard_normal((1, 40, 98)).astype(np.float32)},
    outputs=["logits", "gru_state"], recalibrate=True, input_shape=(40, 98))
# 1-d convolutions and pools over the frames (the NPU runs them as 2-d with H = 1).
MODELS["kws_tcresnet"] = dict(
    build=KwsTcResnet,
    inputs=lambda rng: {"mel": rng.standard_normal((1, 40, 101)).astype(np.float32)},
    outputs=["logits"], recalibrate=True, input_shape=(40, 101),
    expect_ops=("Conv", "MaxPool", "AveragePool", "GlobalAveragePool"))
MODELS["detector_nms"] = dict(
    build=DetectorNms,
    inputs=lambda rng: {"image": rng.standard_normal((1, 3, 128, 128)).astype(np.float32)},
    outputs=["boxes", "scores", "keep"], recalibrate=True, input_shape=(3, 128, 128))
# A fully convolutional detector: --image-size exports it smaller (a multiple of 32) for the
# checks that simulate it (scripts/npu_zoo_check.sh); the zoo's copy is 640x640.
MODELS["mnv3_fpn_db"] = dict(
    build=Mnv3FpnDb, image_size=640,
    inputs=lambda rng, size: {"image": rng.standard_normal((1, 3, size, size)).astype(np.float32)},
    outputs=["probability"], recalibrate=True, input_shape=(3, 320, 320),
    expect_ops=("Resize", "Concat", "ConvTranspose", "BatchNormalization", "Sigmoid"))
# Semantic segmentation with dilated depthwise convolutions (the NPU's vector cores): the
# zoo's copy is 256x256; scripts/npu_zoo_check.sh simulates it at 128x128 (--image-size).
MODELS["lraspp_mobilenet_v3_large"] = dict(
    build=LrasppMnv3, image_size=256,
    inputs=lambda rng, size: {"image": rng.standard_normal((1, 3, size, size)).astype(np.float32)},
    outputs=["out"], recalibrate=True, input_shape=(3, 256, 256),
    expect_ops=("Resize", "HardSigmoid", "GlobalAveragePool"))
# YOLOv8-style: Split/Concat, SiLU, SPPF max pools, nearest upsample, DFL softmax on axis 1.
MODELS["yolo_small"] = dict(
    build=YoloSmall,
    inputs=lambda rng: {"image": rng.standard_normal((1, 3, 128, 128)).astype(np.float32)},
    outputs=["boxes", "scores"], recalibrate=True, input_shape=(3, 128, 128),
    expect_ops=("Split", "Concat", "MaxPool", "Resize", "Softmax", "Sigmoid"))
# Explicit "same" Pads before every 3x3 conv, as TensorFlow-converted models have them (the
# fold-pad pass makes them the convs' own pads).
MODELS["tf_same_pad"] = dict(
    build=TfSamePad,
    inputs=lambda rng: {"input": rng.standard_normal((1, 3, 96, 96)).astype(np.float32)},
    outputs=["output"], recalibrate=True, input_shape=(3, 96, 96), expect_ops=("Pad", "Conv"))
MODELS["refine_loop"] = dict(
    build=RefineLoop, script=True,
    inputs=lambda rng: {"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)},
    outputs=["logits", "state"], recalibrate=False, expect_ops=("Loop", "If"))


def seed_for(name):
    # A stable per-model seed (Python's hash() is salted per process).
    return sum((i + 1) * ord(ch) for i, ch in enumerate(name)) % (2**31)


def recalibrate_batchnorm(model, input_shape, batches=3, batch_size=4):
    """Re-estimates BatchNorm running statistics on random batches so that activations of
    the randomly initialized net stay near unit scale instead of vanishing."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, *input_shape))
    model.eval()


def supported_ops():
    with open(OPS_DEF) as f:
        return set(re.findall(r"^EDGEC_OP\((\w+),", f.read(), flags=re.M))


def check_outputs(name, outputs):
    tiny = np.finfo(np.float32).tiny
    for out_name, value in outputs.items():
        if not np.issubdtype(value.dtype, np.floating):
            continue
        if not np.all(np.isfinite(value)):
            raise ExportError(f"{name}: output {out_name} has non-finite values")
        std = float(value.std())
        subnormal = int(np.count_nonzero((value != 0) & (np.abs(value) < tiny)))
        if std <= 1e-3 or subnormal:
            raise ExportError(f"{name}: output {out_name} is degenerate (std {std:.3g}, "
                              f"{subnormal} subnormal values); fix the model's scale")


def export_one(name, spec, model_dir, image_size=None):
    seed = seed_for(name)
    torch.manual_seed(seed)
    model = spec["build"]()
    if spec.get("recalibrate"):
        recalibrate_batchnorm(model, spec["input_shape"])
    model.eval()

    rng = np.random.default_rng(seed)
    if "image_size" in spec:
        inputs = spec["inputs"](rng, image_size or spec["image_size"])
    elif image_size:
        raise ExportError(f"{name}: --image-size applies only to models that declare an image_size")
    else:
        inputs = spec["inputs"](rng)
    args = tuple(torch.from_numpy(v) for v in inputs.values())

    with torch.no_grad():
        result = model(*args)
    result = result if isinstance(result, tuple) else (result,)
    outputs = {n: r.detach().numpy() for n, r in zip(spec["outputs"], result)}
    check_outputs(name, outputs)

    tmp_dir = model_dir + ".tmp"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(os.path.join(tmp_dir, "inputs"))
    os.makedirs(os.path.join(tmp_dir, "torch"))
    model_path = os.path.join(tmp_dir, "model.onnx")

    export_kwargs = dict(opset_version=OPSET, input_names=list(inputs),
                         output_names=spec["outputs"])
    if spec.get("keep_batchnorm"):
        export_kwargs.update(do_constant_folding=False,
                             training=torch.onnx.TrainingMode.PRESERVE)
    if spec.get("plain_transformer_path"):
        # The fused fast path of nn.TransformerEncoderLayer has no ONNX export; it is
        # bypassed when parameters require grad and grad mode is on.
        for p in model.parameters():
            p.requires_grad_(True)
        with torch.enable_grad():
            torch.onnx.export(model, args, model_path, **export_kwargs)
    elif spec.get("script"):
        # Scripted, not traced: loops and branches become Loop and If nodes.
        with torch.no_grad():
            torch.onnx.export(torch.jit.script(model), args, model_path, **export_kwargs)
    else:
        with torch.no_grad():
            torch.onnx.export(model, args, model_path, **export_kwargs)

    proto = onnx.load(model_path)
    onnx.checker.check_model(proto)
    ops = collections.Counter(n.op_type for n in proto.graph.node)
    if spec.get("keep_batchnorm") and ops["BatchNormalization"] < 15:
        raise ExportError(f"{name}: expected ~20 BatchNormalization nodes, export has "
                          f"{ops['BatchNormalization']}")
    for op in spec.get("expect_ops", ()):
        if not ops[op]:
            raise ExportError(f"{name}: expected the export to keep a {op} node; it has none")
    sub_ops = collections.Counter()
    for n in proto.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                sub_ops.update(m.op_type for m in a.g.node)
    ops = ops + sub_ops
    foreign = sorted(op for op in ops if op not in supported_ops())
    if foreign:
        raise ExportError(f"{name}: export uses ops edgec does not list: {', '.join(foreign)}")

    for input_name, value in inputs.items():
        np.save(os.path.join(tmp_dir, "inputs", input_name + ".npy"), value)
    for out_name, value in outputs.items():
        np.save(os.path.join(tmp_dir, "torch", out_name + ".npy"), value)

    shutil.rmtree(model_dir, ignore_errors=True)
    os.rename(tmp_dir, model_dir)
    params = sum(p.numel() for p in model.parameters())
    return len(proto.graph.node), params, ops


def is_cached(model_dir):
    input_dir = os.path.join(model_dir, "inputs")
    return (os.path.isfile(os.path.join(model_dir, "model.onnx")) and
            os.path.isdir(input_dir) and
            any(f.endswith(".npy") for f in os.listdir(input_dir)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--force", action="store_true", help="re-export cached models")
    parser.add_argument("--show-ops", action="store_true", help="print each op histogram")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--image-size", type=int, default=None,
                        help="export the models that declare an image_size at this size instead")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is required")

    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"export_models: unknown model(s) {', '.join(unknown)}; known: "
              f"{', '.join(MODELS)}", file=sys.stderr)
        return 2

    os.makedirs(args.out_dir, exist_ok=True)
    failures = 0
    for name in names:
        model_dir = os.path.join(args.out_dir, name)
        if not args.force and is_cached(model_dir):
            print(f"{name:20s} cached")
            continue
        start = time.time()
        try:
            nodes, params, ops = export_one(name, MODELS[name], model_dir, args.image_size)
        except ExportError as e:
            print(f"export_models: FAILED {e}", file=sys.stderr)
            failures += 1
            continue
        print(f"{name:20s} {nodes:5d} nodes {params / 1e6:8.3f} M params "
              f"{time.time() - start:6.1f} s", flush=True)
        if args.show_ops:
            print("    " + " ".join(f"{op}:{n}" for op, n in sorted(ops.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
