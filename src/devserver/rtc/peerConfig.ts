// SPDX-License-Identifier: GPL-3.0-or-later
import {
  useAbsSendTime,
  useAudioLevelIndication,
  useRepairedRtpStreamId,
  useSdesMid,
  useSdesRTPStreamId,
  type RTCPeerConnectionConfig,
} from 'werift';
import { forwardedCodecs } from '../sfu/forwardedCodecs.js';
import { isLocalAddress } from '../nodeAddress.js';

export interface IceSettings {
  /** The address put in the server's ICE candidates. */
  nodeIp: string;
  /** Inclusive UDP port range for ICE sockets; any free port when absent. */
  udpPortRange?: [number, number];
}

/**
 * The configuration of a participant's peer connections. `max-bundle` matters for the
 * subscriber side: without it werift creates a transport per transceiver added during
 * renegotiation and the connection fails right after connecting. The publisher side also
 * negotiates the RTP stream id extensions: simulcast layers (rid q/h/f, the SDKs' default for
 * video) are told apart only by them.
 */
export function peerConnectionConfig(
  ice: IceSettings,
  role: 'publisher' | 'subscriber',
): RTCPeerConnectionConfig {
  // Bind to the node address when it is ours; otherwise (NAT, containers) listen everywhere and
  // only advertise it.
  const local = isLocalAddress(ice.nodeIp);
  return {
    codecs: forwardedCodecs(),
    headerExtensions: {
      // Audio levels drive active speaker detection (SpeakersChanged).
      audio: role === 'publisher' ? [useSdesMid(), useAudioLevelIndication()] : [useSdesMid()],
      video:
        role === 'publisher'
          ? [useSdesMid(), useAbsSendTime(), useSdesRTPStreamId(), useRepairedRtpStreamId()]
          : [useSdesMid(), useAbsSendTime()],
    },
    bundlePolicy: 'max-bundle',
    // No STUN servers: werift's default points at a public one, and the dev server must never
    // send traffic off the machine on its own.
    iceServers: [],
    iceUseIpv6: false,
    icePortRange: ice.udpPortRange,
    iceInterfaceAddresses: local ? { udp4: ice.nodeIp } : undefined,
    iceAdditionalHostAddresses: [ice.nodeIp],
  };
}
