// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The embedded database's statements and transactions, one at a time, as PGlite's one connection
 * runs them: a transaction's statements never interleave with others'.
 *
 * Pieces run in arrival order, except that a piece taken `first` (a single statement) goes ahead
 * of the waiting pieces that are not (transactions), FIRST_AHEAD_LIMIT in a row at most: in a
 * burst of creates, a key's lookup then waits for the transaction under way, not for every create
 * queued before it, and the creates behind it are refused as soon as their key is known
 * (createQueue.ts). Callers that need an order await it, as they must with a pool of connections.
 *
 * A piece taken `idle` (the node's warm-up, warmUp.ts) runs only when no other piece waits: a
 * real statement that comes meanwhile waits for the one idle piece under way at most.
 */
export class StatementQueue {
  private readonly firstPieces: Piece[] = [];
  private readonly otherPieces: Piece[] = [];
  private readonly idlePieces: Piece[] = [];
  /** Pieces taken `first` in a row while others waited (see nextPiece). */
  private aheadInARow = 0;
  private busy = false;

  /**
   * Runs `work` when its turn comes; `first`: ahead of waiting pieces that are not; `idle`: only
   * when no other piece waits.
   */
  take<T>(work: () => Promise<T>, { first = false, idle = false } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): Promise<T> => {
        try {
          return work();
        } catch (err) {
          return Promise.reject(err); // thrown before its promise: the queue goes on all the same
        }
      };
      const piece: Piece = {
        run: () =>
          start().then(
            (value) => {
              this.finished();
              resolve(value);
            },
            (err: unknown) => {
              this.finished();
              reject(err);
            },
          ),
      };
      (idle ? this.idlePieces : first ? this.firstPieces : this.otherPieces).push(piece);
      if (!this.busy) this.next();
    });
  }

  private next(): void {
    const piece = this.nextPiece();
    this.busy = piece !== undefined;
    void piece?.run();
  }

  /**
   * A piece taken `first` while any wait, but not more than FIRST_AHEAD_LIMIT in a row while
   * others wait: a flood of single statements (lookups of made-up secrets) cannot starve the
   * transactions.
   */
  private nextPiece(): Piece | undefined {
    if (this.otherPieces.length === 0) {
      this.aheadInARow = 0;
      return this.firstPieces.shift() ?? this.idlePieces.shift();
    }
    if (this.firstPieces.length > 0 && this.aheadInARow < FIRST_AHEAD_LIMIT) {
      this.aheadInARow++;
      return this.firstPieces.shift();
    }
    this.aheadInARow = 0;
    return this.otherPieces.shift();
  }

  /**
   * A piece ended: the next one starts before its caller hears of it, so that the database does
   * not wait for the caller's continuation to run.
   */
  private finished(): void {
    this.busy = false;
    if (this.firstPieces.length + this.otherPieces.length + this.idlePieces.length > 0) this.next();
  }
}

interface Piece {
  /** Runs the piece, then starts the next and settles its caller's promise; never rejects. */
  run(): Promise<void>;
}

/** How many single statements may go ahead of a waiting transaction in a row. */
export const FIRST_AHEAD_LIMIT = 16;
