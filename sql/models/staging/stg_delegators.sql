-- description: One row per delegation, as of its newest version (status and rewards change over time).
-- unique: tx_hash
-- incremental: true
-- not_null: node_id, amount_delegated_navax, started_at, ended_at, delegation_status
-- accepted_values: delegation_status = pending | active | completed
-- column: tx_hash: the delegation's AddDelegatorTx / AddPermissionlessDelegatorTx
-- column: network: mainnet or fuji
-- column: node_id: the validator delegated to
-- column: reward_addresses: the P-Chain addresses the delegator's reward goes to
-- column: amount_delegated_navax: the stake delegated, in nAVAX
-- column: delegation_fee_percent: the validator's fee on the delegation's reward, in percent (2.0000 = 2 %)
-- column: started_at: start of the delegation period (UTC)
-- column: ended_at: end of the delegation period (UTC; in the future while pending or active)
-- column: delegation_status: pending (not started), active, completed, as last seen
-- column: gross_reward_navax: reward before the validator's fee, in nAVAX: the paid reward of a completed delegation; for a pending or active one the API may give its estimate here (null when it gives none)
-- column: net_reward_navax: what the delegator received (or, before completion, may receive) after the fee, in nAVAX (null when the API gives none)
-- column: estimated_gross_reward_navax: the expected reward before the fee of a pending or active delegation, in nAVAX (null once completed)
-- column: estimated_net_reward_navax: the expected reward after the fee of a pending or active delegation, in nAVAX (null once completed)
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('delegators') }}
),

newest as (
    select * from {{ newest('source', 'txHash') }}
),

final as (
    select
        txHash as tx_hash,
        network,
        nodeId as node_id,
        rewardAddresses as reward_addresses,
        amountDelegated as amount_delegated_navax,
        cast(delegationFee as decimal(9, 4)) as delegation_fee_percent,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        delegationStatus as delegation_status,
        grossReward as gross_reward_navax,
        netReward as net_reward_navax,
        estimatedGrossReward as estimated_gross_reward_navax,
        estimatedNetReward as estimated_net_reward_navax,
        _extracted_at as extracted_at
    from newest
)

select * from final
