import type { Renderer } from "../model.ts";

export const renderClash: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderMihomo: Renderer = () => {
  throw new Error("not rendered yet");
};
export const renderStash: Renderer = () => {
  throw new Error("not rendered yet");
};
