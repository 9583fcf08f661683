import type { Format, Renderer } from "../model.ts";
import { renderClash, renderMihomo, renderStash } from "./clash.ts";
import { renderLoon } from "./loon.ts";
import { renderQx } from "./qx.ts";
import { renderSingbox } from "./singbox.ts";
import { renderSurfboard, renderSurge } from "./surge.ts";
import { renderQuantumult, renderShadowrocket, renderSsr, renderV2ray } from "./uri.ts";
import { renderXray } from "./xray.ts";

export const RENDERERS: Record<Format, Renderer> = {
  clash: renderClash,
  mihomo: renderMihomo,
  stash: renderStash,
  singbox: renderSingbox,
  v2ray: renderV2ray,
  shadowrocket: renderShadowrocket,
  ssr: renderSsr,
  surge: renderSurge,
  surfboard: renderSurfboard,
  qx: renderQx,
  quantumult: renderQuantumult,
  loon: renderLoon,
  xray: renderXray,
};
