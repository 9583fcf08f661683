import type { Renderer } from "../model.ts";

export const renderV2ray: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderShadowrocket: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderSsr: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderQuantumult: Renderer = () => {
  throw new Error("not rendered yet");
};
