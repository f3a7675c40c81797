// SPDX-License-Identifier: GPL-3.0-or-later
import { DataPacket } from '@livekit/protocol';
import type { Participant } from './participant.js';

/**
 * Relays a data packet from a participant's publisher data channel to the others in its room
 * (`participants`).
 */
export function relayData(
  sender: Participant,
  data: Buffer,
  reliable: boolean,
  participants: Iterable<Participant>,
): void {
  if (!sender.permission.canPublishData) return;
  let packet: DataPacket;
  try {
    packet = DataPacket.fromBinary(data);
  } catch (err) {
    sender.log.debug({ err }, 'dropped undecodable data packet');
    return;
  }
  // The sender is whoever owns the channel, whatever the packet claims.
  packet.participantIdentity = sender.identity;
  packet.participantSid = sender.sid;
  if (packet.value.case === 'user') {
    packet.value.value.participantIdentity = sender.identity;
    packet.value.value.participantSid = sender.sid;
  }
  deliverData(packet, reliable, participants, sender);
}

/**
 * Delivers a packet to its destinations among `participants` (identities or sids; everyone when
 * none) other than the sender.
 */
export function deliverData(
  packet: DataPacket,
  reliable: boolean,
  participants: Iterable<Participant>,
  sender?: Participant,
): void {
  const identities = new Set(packet.destinationIdentities);
  const sids = new Set<string>();
  if (packet.value.case === 'user') {
    for (const identity of packet.value.value.destinationIdentities) identities.add(identity);
    for (const sid of packet.value.value.destinationSids) sids.add(sid);
  }
  const everyone = identities.size === 0 && sids.size === 0;
  const bytes = Buffer.from(packet.toBinary());
  for (const participant of participants) {
    if (participant === sender || participant.isDisconnected) continue;
    if (!everyone && !identities.has(participant.identity) && !sids.has(participant.sid)) continue;
    participant.subscriber?.sendData(bytes, reliable);
  }
}
