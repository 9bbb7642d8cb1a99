/**
 * A bounded min-heap keeping the k best (slot, score) pairs: the vector scan's candidates and the keyword
 * search's best documents. A slot is a row or a document number.
 */
export class TopK {
  private readonly slots: number[] = [];
  private readonly scores: number[] = [];
  /** Score a newcomer must beat; -Infinity until the heap is full. */
  min = -Infinity;

  constructor(private readonly k: number) {}

  /** Keeps (slot, score) while the heap has room, else when it beats `min` (callers in a hot loop may test `min` first). */
  push(slot: number, score: number): void {
    const { slots, scores } = this;
    if (slots.length < this.k) {
      slots.push(slot);
      scores.push(score);
      let i = slots.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (scores[parent] <= scores[i]) break;
        this.swap(i, parent);
        i = parent;
      }
      if (slots.length === this.k) this.min = scores[0];
      return;
    }
    // k = 0 keeps nothing.
    if (slots.length === 0 || !(score > this.min)) return;
    slots[0] = slot;
    scores[0] = score;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < slots.length && scores[l] < scores[m]) m = l;
      if (r < slots.length && scores[r] < scores[m]) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    this.min = scores[0];
  }

  sorted(): { slots: number[]; scores: number[] } {
    const order = this.slots.map((_, i) => i).sort((x, y) => this.scores[y] - this.scores[x]);
    return { slots: order.map((i) => this.slots[i]), scores: order.map((i) => this.scores[i]) };
  }

  private swap(i: number, j: number): void {
    const s = this.slots[i];
    this.slots[i] = this.slots[j];
    this.slots[j] = s;
    const c = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = c;
  }
}
